package main

import (
	"fmt"
	"os"
)

func runDiff(args []string) int {
	fmt.Fprintln(os.Stderr, "bloop diff: not yet available")
	return 2
}
