// Package rectest makes bloop recordings for tests: a real one of a
// program run under the sampler, or a hand-made one of a binary.
package rectest

import (
	"os"
	"path/filepath"
	"testing"

	"bloop/sample"
)

// Record runs argv under the sampler into a temporary file; the test
// skips where perf_event_open is not allowed.
func Record(t testing.TB, argv ...string) string {
	t.Helper()
	if err := sample.Available(); err != nil {
		t.Skipf("perf_event_open unavailable: %v", err)
	}
	path := filepath.Join(t.TempDir(), "p.rec")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := sample.Record(f, argv, sample.Options{}); err != nil {
		t.Fatal(err)
	}
	return path
}

// Fake writes a recording of bin mapped at one base, with one stackless
// sample at each file address (their unwind fails: the samples go under
// [partial]).
func Fake(t testing.TB, bin string, addrs ...uint64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fake.rec")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const base = 0x555555554000
	w := sample.NewWriter(f)
	w.Meta(sample.Meta{Command: []string{bin}, Event: "cpu-clock", Freq: 1000})
	w.Mmap(sample.Mmap{Pid: 1, Tid: 1, Addr: base, Len: 0x10000, Prot: 5, File: bin})
	for i, a := range addrs {
		w.Sample(&sample.Sample{Pid: 1, Tid: 1, Time: uint64(i + 1), IP: base + a, SP: 0x7ffc00000000})
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}
