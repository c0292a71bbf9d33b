// Command bloop recovers the source structure (procedures, inlined code,
// loops, statements) of optimized binaries. See README.md.
package main

import (
	"flag"
	"fmt"
	"os"
)

const usage = `usage: bloop <command> [arguments]

commands:
  struct   write the structure file (hpcstruct format or JSON) of a binary
  diff     compare two structure files structurally
  record   run a program and sample its call stacks (perf_event_open)
  report   attribute a recording to call paths, inlined code and loops
  eval     measure the thesis engine against DWARF inline records

Run 'bloop <command> -h' for a command's flags.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(1)
	}
	var code int
	switch os.Args[1] {
	case "struct":
		code = runStruct(os.Args[2:])
	case "diff":
		code = runDiff(os.Args[2:])
	case "record":
		code = runRecord(os.Args[2:])
	case "report":
		code = runReport(os.Args[2:])
	case "eval":
		code = runEval(os.Args[2:])
	case "-h", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "bloop: unknown command %q\n%s", os.Args[1], usage)
		code = 1
	}
	os.Exit(code)
}

// newFlagSet returns a subcommand's flags; -h prints usage, then the flags.
func newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	return fs
}
