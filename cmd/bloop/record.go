package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"bloop/atomicfile"
	"bloop/sample"
)

func runRecord(args []string) int {
	fs := newFlagSet("record", "usage: bloop record [flags] -- PROGRAM [ARGS...]\n")
	freq := fs.Int("F", 1000, "samples per second (per running thread)")
	out := fs.String("o", "bloop.rec", "output file")
	event := fs.String("e", "cpu-clock", "event: cpu-clock, task-clock, cycles, instructions")
	stack := fs.Int("stack", sample.DefaultStack, fmt.Sprintf("bytes of user stack copied per sample (multiple of 8; %d, the kernel's maximum, for stacks deeper than the default covers)", sample.MaxStack))
	fs.interspersed = false
	argv, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(argv) == 0 {
		fs.Usage()
		return 1
	}
	*freq = capFreq(*freq)
	// Write beside the destination and rename, so a failed run leaves no
	// partial recording.
	tmp, err := atomicfile.CreateTemp(filepath.Dir(*out), ".bloop-rec-*")
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
		return 1
	}
	defer func() {
		os.Remove(tmp.Name())
		atomicfile.Done(tmp.Name())
	}()
	st, err := sample.Record(tmp, argv, sample.Options{Freq: *freq, Event: *event, StackSize: *stack,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop: record %s: %v\n", argv[0], err)
		return 1
	}
	if err := atomicfile.Replace(tmp.Name(), *out); err != nil {
		fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "bloop: %s: %s; %d samples in %.2fs (%d lost, %d stack copies full, %d throttled) written to %s\n",
		argv[0], st.Fate(), st.Samples, time.Duration(st.DurationNanos).Seconds(), st.Lost, st.FullStacks, st.Throttles, *out)
	// The program's status, as time(1) and test runners pass it on, so
	// that bloop record -- ./test can stand in a test script.
	return st.ShellStatus()
}

// capFreq lowers freq to the kernel's sampling limit, with a warning: the
// kernel refuses a higher frequency.
func capFreq(freq int) int {
	limit, err := sample.MaxSampleRate()
	if err != nil {
		return freq // no limit known: perf_event_open will say
	}
	capped, lowered := sample.CapFreq(freq, limit)
	if lowered {
		fmt.Fprintf(os.Stderr, "bloop: record: -F %d exceeds kernel.perf_event_max_sample_rate %d; sampling at %d Hz\n", freq, limit, capped)
	}
	return capped
}
