package profile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"bloop/cache"
	"bloop/fuzzing"
	"bloop/sample"
)

// FuzzRecording: report's reading of a recording, from the file through
// the unwinder to the views and the pprof export. Any bytes give a
// profile or one error naming the file; never a panic or a hang. The
// seed maps a committed binary, so mutations reach the unwinder and the
// scope attribution of a real module (and its cached scope index).
func FuzzRecording(f *testing.F) {
	bin, _ := filepath.Abs("../testdata/bin/recur-gcc12-O2")
	f.Add(fuzzSeedRecording(f, bin, 0))
	f.Add(fuzzSeedRecording(f, bin, 12))
	// An aarch64 recording: samples with their link register (kind 11).
	a64, _ := filepath.Abs("../testdata/prof/cross/sampled-arm64")
	if rec, _ := crossRecording(f, a64, a64); rec != "" {
		b, _ := os.ReadFile(rec)
		f.Add(b)
	}
	dir := f.TempDir()
	// The module's analysis comes from a cache after the first input: the
	// binary is not what is fuzzed here, and its analysis would be most of
	// each execution.
	c, err := cache.Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		reportBytes(t, fuzzing.WriteInput(t, dir, "f.rec", b), Options{Cache: c}, false)
	})
}

// fuzzSeedRecording is a recording of n samples in bin: stacks of return
// addresses into it, some mapped twice or at odd offsets.
func fuzzSeedRecording(f testing.TB, bin string, n int) []byte {
	var buf bytes.Buffer
	w := sample.NewWriter(&buf)
	w.Meta(sample.Meta{Command: []string{bin}, Event: "cpu-clock", Freq: 1000, StackSize: 256})
	const base = 0x555555554000
	w.Mmap(sample.Mmap{Pid: 1, Tid: 1, Addr: base, Len: 0x2000, Prot: 5, File: bin})
	w.Comm(sample.Comm{Pid: 1, Tid: 1, Name: "recur"})
	for i := 0; i < n; i++ {
		st := make([]byte, 64)
		for j := 0; j < 64; j += 8 {
			v := uint64(base + 0x1000 + 0x40*uint64(i+j))
			for k := range 8 {
				st[j+k] = byte(v >> (8 * k))
			}
		}
		w.Sample(&sample.Sample{Pid: 1, Tid: 1, Time: uint64(i), IP: base + 0x1100 + uint64(i), SP: 0x7ffc00000000,
			BP: 0x7ffc00000010, StackSize: 256, Stack: st})
	}
	w.Lost(1)
	w.Stats(sample.Stats{Samples: uint64(n)})
	if err := w.Flush(); err != nil {
		f.Fatal(err)
	}
	return buf.Bytes()
}
