// Command bloop recovers the source structure (procedures, inlined code,
// loops, statements) of optimized binaries. See README.md.
package main

import (
	"fmt"
	"io"
	"os"

	"bloop/internal/heapfloor"
	"bloop/internal/hugeheap"
)

// A command is one of bloop's subcommands.
type command struct {
	name, summary string
	run           func(args []string) int
}

var commands []command

// init fills commands: help refers to the table, so it cannot be a
// variable's initializer.
func init() {
	commands = []command{
		{"struct", "write the structure file (hpcstruct format or JSON) of a binary or of an hpcrun measurement directory", runStruct},
		{"diff", "compare two structure files structurally", runDiff},
		{"record", "run a program and sample its call stacks (perf_event_open)", runRecord},
		{"report", "attribute a recording to call paths, inlined code and loops", runReport},
		{"eval", "measure the thesis engine against DWARF inline records", runEval},
		{"version", "print bloop's version", runVersion},
		{"help", "show a command's flags: bloop help COMMAND", runHelp},
	}
}

func writeUsage(w io.Writer) {
	fmt.Fprint(w, "usage: bloop <command> [arguments]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'bloop help <command>' or 'bloop <command> -h' for a command's flags.\n")
}

func main() {
	// Huge pages for the heap: page faults were a third of a large
	// report's time (internal/hugeheap).
	hugeheap.Advise()
	heapfloor.Set(64<<20, heapPercent(os.Args[1:]))
	os.Exit(dispatch(os.Args[1:]))
}

// heapPercent is how far the heap grows past what the collector kept
// before its next cycle. A report's peak memory is held against perf
// report's: half the runtime's headroom took a cold report of a
// python3.11 perf.data from 163-176 MiB to 140-151 (perf report: 183)
// for 6% of its time, warm ones none. bloop struct keeps the runtime's
// 100: halving cost it 16% of its time.
func heapPercent(args []string) int {
	if len(args) > 0 && args[0] == "report" {
		return 50
	}
	return 100
}

// dispatch runs the command args name; it returns the exit status.
func dispatch(args []string) int {
	if len(args) == 0 {
		writeUsage(os.Stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		writeUsage(os.Stdout)
		return 0
	case "-V", "-version", "--version":
		return runVersion(nil)
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:])
		}
	}
	fmt.Fprintf(os.Stderr, "bloop: unknown command %q (see bloop -h)\n", args[0])
	return 2
}

// runHelp prints a command's usage and flags, as its -h does.
func runHelp(args []string) int {
	if len(args) == 0 {
		writeUsage(os.Stdout)
		return 0
	}
	if len(args) > 1 {
		fmt.Fprintln(os.Stderr, "bloop help: one command at a time (see bloop -h)")
		return 2
	}
	for _, c := range commands {
		if c.name == args[0] && c.name != "help" {
			return c.run([]string{"-h"})
		}
	}
	if args[0] == "help" {
		writeUsage(os.Stdout)
		return 0
	}
	fmt.Fprintf(os.Stderr, "bloop help: unknown command %q (see bloop -h)\n", args[0])
	return 2
}
