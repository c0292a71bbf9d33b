package profile

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"bloop/sample"

	pprofile "github.com/google/pprof/profile"
)

// TestGarbageSamples feeds the unwinder random registers and stacks inside
// real modules: every sample must end as complete, truncated or failed,
// never a panic or a hang.
func TestGarbageSamples(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/bin/recur-gcc12-O2")
	path := filepath.Join(t.TempDir(), "g.rec")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := sample.NewWriter(f)
	w.Meta(sample.Meta{Command: []string{bin}, Event: "cpu-clock", Freq: 1000, StackSize: 256})
	const base = 0x555555554000
	w.Mmap(sample.Mmap{Pid: 1, Tid: 1, Addr: base, Len: 0x2000, Pgoff: 0, Prot: 5, File: bin})
	w.Mmap(sample.Mmap{Pid: 1, Tid: 1, Addr: 0x7f0000000000, Len: 0x1000, Prot: 5, File: "/nonexistent/lib.so"})
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		st := make([]byte, 8*rng.Intn(33))
		for j := 0; j+8 <= len(st); j += 8 {
			v := rng.Uint64()
			switch rng.Intn(3) {
			case 0:
				v = base + uint64(rng.Intn(0x2000)) // a code address
			case 1:
				v = 0x7ffc00000000 + uint64(rng.Intn(512)) // a stack address
			}
			for k := 0; k < 8; k++ {
				st[j+k] = byte(v >> (8 * k))
			}
		}
		ip := base + uint64(rng.Intn(0x2000))
		if i%7 == 0 {
			ip = rng.Uint64()
		}
		w.Sample(&sample.Sample{Pid: 1, Tid: uint32(1 + i%3), Time: uint64(i), IP: ip, SP: 0x7ffc00000000,
			BP: 0x7ffc00000000 + uint64(rng.Intn(512)), StackSize: 256, Stack: st})
	}
	w.Flush()
	f.Close()
	p, err := Build(path, Options{Analyze: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	if n := p.Outcomes[Complete] + p.Outcomes[Truncated] + p.Outcomes[Failed]; n != 2000 || p.Samples != 2000 {
		t.Fatalf("%d outcomes for %d samples", n, p.Samples)
	}
	t.Logf("outcomes %v, reasons %v", p.Outcomes, p.Reasons)
}

// TestNoSampleLeftOut: samples whose unwind stops early are kept, under
// one [partial] root with their innermost frames, in the trees and in
// pprof, so that every view accounts for 100% of the samples.
func TestNoSampleLeftOut(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/bin/recur-gcc12-O2")
	path := filepath.Join(t.TempDir(), "p.rec")
	if err := os.WriteFile(path, fuzzSeedRecording(t, bin, 40), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Build(path, Options{Analyze: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	partialN := p.Outcomes[Truncated] + p.Outcomes[Failed]
	if partialN == 0 || p.Outcomes[Complete]+partialN != p.Samples {
		t.Fatalf("outcomes %v of %d samples: the test wants partial paths", p.Outcomes, p.Samples)
	}
	var root *Node
	for _, c := range p.Root.Children {
		if c.Elem == partial {
			root = c
		}
	}
	if root == nil || root.Incl != uint64(partialN) || p.Root.Incl != uint64(p.Samples) {
		t.Errorf("[partial] holds %v samples of %d partial; the tree %d of %d", root, partialN, p.Root.Incl, p.Samples)
	}
	if root != nil && len(root.Children) == 0 {
		t.Error("[partial] keeps no frames")
	}
	// Every sample is some scope's excl: the flat view sums to 100%.
	var excl uint64
	var walk func(n *Node)
	walk = func(n *Node) {
		excl += n.Excl
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(p.Root)
	if excl != uint64(p.Samples) {
		t.Errorf("excl sums to %d of %d samples", excl, p.Samples)
	}
	var buf bytes.Buffer
	if err := p.WritePprof(&buf); err != nil {
		t.Fatal(err)
	}
	pp, err := pprofile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var total, underPartial int64
	for _, s := range pp.Sample {
		total += s.Value[0]
		if last := s.Location[len(s.Location)-1]; len(last.Line) > 0 && last.Line[0].Function.Name == "[partial]" {
			underPartial += s.Value[0]
		}
	}
	if total != int64(p.Samples) || underPartial != int64(partialN) {
		t.Errorf("pprof: %d samples, %d under [partial]; want %d and %d", total, underPartial, p.Samples, partialN)
	}
}
