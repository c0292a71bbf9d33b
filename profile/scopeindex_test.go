package profile

import (
	"math/rand/v2"
	"sort"
	"testing"
)

// TestPageIndex: the entry a look-up finds through the page index is the
// one a binary search of all entries finds, for addresses at and around
// every entry's bounds and at random, with entries many to a page, one
// over many pages, and far apart (past the index's bound: searched whole).
func TestPageIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 7))
	for _, c := range []struct {
		name      string
		n         int
		gap, size uint64
	}{
		{"dense", 5000, 8, 24},
		{"sparse", 300, 1 << 14, 1 << 13},
		{"mixed", 3000, 300, 5000},
		{"far apart", 50, 1 << 30, 64},
		{"one", 1, 0, 16},
	} {
		t.Run(c.name, func(t *testing.T) {
			var es []indexEntry
			at := uint64(0x400123)
			for i := 0; i < c.n; i++ {
				at += r.Uint64N(c.gap + 1)
				size := 1 + r.Uint64N(c.size)
				es = append(es, indexEntry{lo: at, hi: at + size, path: []*Elem{{Line: i}}})
				at += size
			}
			x := &scopeIndex{entries: es}
			want := func(addr uint64) []*Elem {
				i := sort.Search(len(es), func(i int) bool { return es[i].lo > addr }) - 1
				if i >= 0 && addr < es[i].hi {
					return es[i].path
				}
				return nil
			}
			check := func(addr uint64) {
				got, w := x.lookup(addr), want(addr)
				if len(got) != len(w) || len(got) > 0 && got[0] != w[0] {
					t.Fatalf("lookup(%#x) = %v, want %v", addr, got, w)
				}
			}
			for _, e := range es {
				for _, a := range []uint64{e.lo - 1, e.lo, e.lo + 1, e.hi - 1, e.hi, e.hi + 1, e.lo &^ 0xfff, e.lo | 0xfff} {
					check(a)
				}
			}
			for range 20000 {
				check(es[0].lo - 0x2000 + r.Uint64N(at-es[0].lo+0x4000))
			}
			check(0)
			check(^uint64(0))
			if (c.name == "far apart") != (x.pages.below == nil) {
				t.Errorf("page index made: %v, want it for all but entries far apart", x.pages.below != nil)
			}
		})
	}
}
