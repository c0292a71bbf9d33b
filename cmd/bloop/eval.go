package main

import (
	"flag"
	"fmt"
	"os"

	"bloop/eval"
)

// runEval measures the thesis engine against DWARF inline records.
func runEval(args []string) int {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	jobs := fs.Int("j", 0, "worker threads (default: all cores)")
	source := fs.String("source", "", "source file: compare every mode's loop header lines with the loops written in it")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: bloop eval [flags] BINARY...\n       bloop eval --source SRC BINARY...\n\nRuns both placement engines on binaries with DWARF inline records and prints\nthe thesis engine's alien-byte precision and recall, the share of inlined\nbytes attributed to the right file, and the shares of loops (matched by entry\naddress) in the right context and with the same header line.\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(splitShortInts(args)); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	if *source != "" {
		code := 0
		for _, b := range fs.Args() {
			rs, err := eval.SourceEval(*source, b, *jobs)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bloop eval: %v\n", err)
				code = 1
				continue
			}
			eval.WriteSource(os.Stdout, *source, b, rs)
		}
		return code
	}
	var rs []*eval.Result
	code := 0
	for _, b := range fs.Args() {
		r, err := eval.Binary(b, *jobs)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bloop eval: %v\n", err)
			code = 1
			continue
		}
		rs = append(rs, r)
	}
	eval.Write(os.Stdout, rs)
	return code
}
