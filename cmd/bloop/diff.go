package main

import (
	"fmt"
	"os"

	"bloop/golden"
)

// runDiff compares two structure files; exit 0 equal, 1 different, 2 error, like diff(1).
func runDiff(args []string) int {
	fs := newFlagSet("diff", "usage: bloop diff [flags] A.hpcstruct B.hpcstruct\n")
	addrs := fs.Bool("addresses", false, "also compare address ranges")
	asJSON := fs.Bool("json", false, "write the report as JSON")
	operands, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(operands) != 2 {
		fs.Usage()
		return 2
	}
	var docs [2]*golden.Doc
	for i := range docs {
		d, err := golden.ParseFile(operands[i])
		if err != nil {
			fmt.Fprintf(os.Stderr, "bloop diff: %v\n", err)
			return 2
		}
		docs[i] = d
	}
	r := golden.Diff(docs[0], docs[1], golden.DiffOptions{Addresses: *addrs})
	var err error
	if *asJSON {
		err = r.WriteJSON(os.Stdout)
	} else {
		err = r.WriteText(os.Stdout)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop diff: %v\n", err)
		return 2
	}
	if r.Equal() {
		return 0
	}
	return 1
}
