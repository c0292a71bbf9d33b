package main

import (
	"fmt"
	"os"

	"bloop/sample"
)

func runReport(args []string) int {
	rec, err := sample.ReadFile(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%+v\n%d samples %d mmaps %d comms %d forks lost %d stats %+v\n", rec.Meta, len(rec.Samples), len(rec.Mmaps), len(rec.Comms), len(rec.Forks), rec.Lost, rec.Stats)
	for _, m := range rec.Mmaps {
		fmt.Printf("%+v\n", m)
	}
	n := 0
	for _, s := range rec.Samples {
		if n < 5 {
			fmt.Printf("%d %d %#x sp=%#x bp=%#x stack=%d/%d\n", s.Pid, s.Tid, s.IP, s.SP, s.BP, len(s.Stack), s.StackSize)
		}
		n++
	}
	return 0
}
