package profile

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSampledAddrs: each module's distinct frame addresses, in order,
// whether kept in a bitmap (a module's code) or, spanning more than
// maxAddrBits, listed and sorted; modules not wanted are not listed.
func TestSampledAddrs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	mods := []*Module{{Name: "prog"}, {Name: "wide"}, {Name: "one"}, {Name: "unwanted"}}
	gen := []func() uint64{
		func() uint64 { return 0x401000 + r.Uint64N(3<<20) },
		func() uint64 { // 0, the top, and far apart
			switch r.IntN(4) {
			case 0:
				return 0
			case 1:
				return ^uint64(0)
			}
			return r.Uint64()
		},
		func() uint64 { return 0x7f00 },
		func() uint64 { return r.Uint64N(1 << 20) },
	}
	var s stacks
	want := map[*Module][]uint64{}
	for i := range 20000 {
		var frames []Frame
		for range 1 + r.IntN(6) {
			k := r.IntN(len(mods))
			a := gen[k]()
			frames = append(frames, Frame{Mod: mods[k], Addr: a})
			want[mods[k]] = append(want[mods[k]], a)
		}
		s.add(uint32(i%3), frames, Complete, 0, 1)
	}
	wanted := []bool{false, true, true, true, false}
	got := sampledAddrs(&s, wanted)
	for k, m := range s.mods {
		w := slices.Compact(slices.Sorted(slices.Values(want[m])))
		if !wanted[k+1] {
			if got[k+1].n != 0 {
				t.Errorf("%s: %d frames listed, want none", m.Name, got[k+1].n)
			}
			continue
		}
		if g := got[k+1].sorted(); !slices.Equal(g, w) {
			t.Errorf("%s: %d addresses, want %d (%x..., want %x...)", m.Name, len(g), len(w), g[:min(4, len(g))], w[:min(4, len(w))])
		}
		if wide := m.Name == "wide"; wide != (got[k+1].bits == nil) {
			t.Errorf("%s: bitmap %v, want %v", m.Name, got[k+1].bits != nil, !wide)
		}
	}
}
