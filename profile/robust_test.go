package profile

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"bloop/sample"
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
