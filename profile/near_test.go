package profile

import (
	"math/rand/v2"
	"testing"
)

// TestNearLookup checks seal's marks against every pair of a process's
// mappings, then looks up random addresses of random stacks in random
// processes' mappings (overlapping ones among them, made at different
// times) with near, and checks each answer against lookupIn's scan.
func TestNearLookup(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	mods := []*Module{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	s := &space{procs: map[uint32][]mapping{}}
	for pid := range uint32(20) {
		for range 1 + rng.IntN(12) {
			lo := uint64(rng.IntN(64)) << 12
			s.procs[pid] = append(s.procs[pid], mapping{lo: lo, hi: lo + uint64(1+rng.IntN(8))<<12,
				bias: uint64(rng.IntN(4)) << 12, time: uint64(rng.IntN(100)), mod: mods[rng.IntN(3)]})
		}
	}
	s.seal()
	alone := 0
	for pid, ms := range s.procs {
		for j, m := range ms {
			want := true
			for i, o := range ms {
				if i != j && o.lo < m.hi && m.lo < o.hi {
					want = false
				}
			}
			if m.alone != want {
				t.Errorf("pid %d, mapping %d [%#x,%#x): alone %v, want %v", pid, j, m.lo, m.hi, m.alone, want)
			}
			if m.alone {
				alone++
			}
		}
	}
	if alone == 0 {
		t.Fatal("no mapping is alone: the shortcut is not tested")
	}
	for range 5000 {
		pid, tm := uint32(rng.IntN(21)), uint64(rng.IntN(110))
		n := s.near(pid, tm)
		for range 1 + rng.IntN(10) {
			addr := uint64(rng.IntN(72 << 12))
			m, a, ok := n.lookup(addr)
			wm, wa, wok := lookupIn(s.procs[pid], addr, tm)
			if m != wm || a != wa || ok != wok {
				t.Fatalf("pid %d at %d: lookup(%#x) = %v %#x %v, want %v %#x %v", pid, tm, addr, m, a, ok, wm, wa, wok)
			}
		}
	}
}
