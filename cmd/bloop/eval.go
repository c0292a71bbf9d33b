package main

import (
	"fmt"
	"os"

	"bloop/eval"
)

const evalUsage = `usage: bloop eval [flags] BINARY...
       bloop eval --source SRC BINARY...

Runs both placement engines on binaries with DWARF inline records and prints
the thesis engine's alien-byte precision and recall, the share of inlined
bytes attributed to the right file, and the shares of loops (matched by entry
address) in the right context and with the same header line.
`

// runEval measures the thesis engine against DWARF inline records.
func runEval(args []string) int {
	fs := newFlagSet("eval", evalUsage)
	jobs := fs.Int("j", 0, "worker threads (default: all cores)")
	misses := fs.Bool("misses", false, "also list each loop placed in the wrong context")
	source := fs.String("source", "", "source file: compare every mode's loop header lines with the loops written in it")
	operands, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(operands) == 0 {
		fs.Usage()
		return 2
	}
	if *source != "" {
		code = 0
		for _, b := range operands {
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
	code = 0
	for _, b := range operands {
		r, err := eval.Binary(b, *jobs)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bloop eval: %v\n", err)
			code = 1
			continue
		}
		rs = append(rs, r)
	}
	eval.Write(os.Stdout, rs)
	if *misses {
		eval.WriteMisses(os.Stdout, rs)
	}
	return code
}
