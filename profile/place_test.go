package profile

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestPlaceMemo: what is put is found below its own node only, through
// the table's growth; what is not put is not found.
func TestPlaceMemo(t *testing.T) {
	parents := []*Node{{Label: "a"}, {Label: "b"}, {Label: "c"}}
	var m placeMemo
	if m.find(parents[0], 1) != nil {
		t.Fatal("found in an empty memo")
	}
	places := map[[2]int]*Node{}
	for k := range 5000 {
		for i, p := range parents {
			if (k+i)%3 == 0 {
				continue
			}
			n := &Node{}
			m.put(p, uint64(k)*0x1000, n)
			places[[2]int{i, k}] = n
		}
	}
	for k := range 5000 {
		for i, p := range parents {
			want := places[[2]int{i, k}]
			if got := m.find(p, uint64(k)*0x1000); got != want {
				t.Fatalf("below %s, key %#x: %p, want %p", p.Label, k*0x1000, got, want)
			}
			if got := m.find(p, uint64(k)*0x1000+1); got != nil {
				t.Fatalf("below %s, key %#x never put: found", p.Label, k*0x1000+1)
			}
		}
	}
	if m.n != len(places) || 4*m.n > 3*len(m.slots) {
		t.Errorf("%d held in %d slots, want %d at most three quarters full", m.n, len(m.slots), len(places))
	}
}

// TestPathKey: paths are told apart by their array and length, a prefix
// of a path included.
func TestPathKey(t *testing.T) {
	a := []*Elem{{Name: "f"}, {Name: "loop"}}
	b := []*Elem{a[0], a[1]}
	keys := map[uint64]string{}
	for name, p := range map[string][]*Elem{"a": a, "a[:1]": a[:1], "b": b, "partial": partialPath} {
		k, ok := pathKey(p)
		if !ok {
			t.Fatalf("%s: not keyed", name)
		}
		if other, dup := keys[k]; dup {
			t.Errorf("%s and %s have one key", name, other)
		}
		keys[k] = name
	}
	k1, _ := pathKey(a)
	k2, _ := pathKey(a[:2])
	if k1 != k2 {
		t.Errorf("a path and the same slice again have different keys")
	}
}

func TestMakeTouched(t *testing.T) {
	type odd [3]byte // a size that divides no page
	for _, n := range []int{0, 1, 100, 1 << 20} {
		s := makeTouched[edgeSlot](n)
		o := makeTouched[odd](n)
		if len(s) != n || len(o) != n {
			t.Fatalf("makeTouched(%d): lengths %d, %d", n, len(s), len(o))
		}
		for i := range s {
			if s[i] != (edgeSlot{}) || o[i] != (odd{}) {
				t.Fatalf("makeTouched(%d): element %d not zero", n, i)
			}
		}
	}
}

// TestSortAddrs: the radix sort orders as slices.Sort does, whatever the
// addresses' width, duplicates included.
func TestSortAddrs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		n    int
		mask uint64
	}{
		{0, 0}, {1, 1<<32 - 1}, {1000, 1<<32 - 1}, {5000, 0}, {5000, 0xff},
		{100000, 1<<32 - 1}, {100000, 1<<48 - 1}, {20000, ^uint64(0)},
	} {
		as := make([]uint64, tc.n)
		for i := range as {
			as[i] = r.Uint64() & tc.mask
			if i%7 == 0 && i > 0 {
				as[i] = as[i-1]
			}
		}
		want := slices.Sorted(slices.Values(as))
		if got := sortAddrs(slices.Clone(as)); !slices.Equal(got, want) {
			t.Errorf("%d addresses under %#x: not sorted as slices.Sort", tc.n, tc.mask)
		}
	}
}

// TestPlacedAsInserted files random stacks of several threads (partial
// ones, deep and wide, frames inside and outside a module's scopes:
// procedures, inlined calls, loops, statements, and lines of the symbol
// table) in the tree of stacks and places them after the pass, and
// inserts each sample's scope path as it comes (InsertScopes): the
// merged and the threads' trees must be the same, child for child.
func TestPlacedAsInserted(t *testing.T) {
	mod := &Module{Name: "m"}
	x := syntheticIndex(rand.New(rand.NewPCG(5, 6)))
	rng := rand.New(rand.NewPCG(7, 8))
	newP := func() *Profile {
		p := newProfile(Options{})
		p.bound[mod] = x
		p.EventSamples, p.EventTotals = []uint64{0}, []uint64{0}
		p.stacks.events = 1
		return p
	}
	deferred, inserted := newP(), newP()
	for i := range 30000 {
		tid, out := uint32(rng.IntN(9)), Complete
		if rng.IntN(3) == 0 {
			out = Truncated
		}
		var frames []Frame
		for range 1 + rng.IntN(5) {
			// Few addresses near the root, many at the leaves; some
			// outside the scopes (above 1024).
			frames = append(frames, Frame{Mod: mod, Addr: uint64(rng.IntN(64*(len(frames)+1))) * 4})
		}
		w := uint64(1 + i%7)
		deferred.stacks.add(tid, frames, out, 0, w)
		var path []*Elem
		if out != Complete {
			path = append(path, partial)
		}
		for j := len(frames) - 1; j >= 0; j-- {
			path = append(path, inserted.scopesOf(frames[j])...)
		}
		inserted.InsertScopes(tid, path, 0, w)
	}
	deferred.fileStacks()
	want, got := dumpTrees(inserted), dumpTrees(deferred)
	if got == want {
		return
	}
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			t.Fatalf("placed after the pass and inserted differ first at line %d: %q, %q", i+1, b[i], a[i])
		}
	}
	t.Fatalf("%d lines placed, %d inserted", len(b), len(a))
}

// syntheticIndex is a scope index of 16 procedures of 64 bytes, each
// with statements, a loop and an inlined call, over addresses 0 to 1023;
// addresses above are outside it.
func syntheticIndex(rng *rand.Rand) *scopeIndex {
	x := &scopeIndex{}
	for f := range 16 {
		proc := []*Elem{{Kind: ElemProc, Name: fmt.Sprintf("f%d", f), Module: "m"}}
		loop := with(proc, &Elem{Kind: ElemLoop, File: "a.c", Line: 10 * f})
		inl := with(loop, &Elem{Kind: ElemInline, Name: fmt.Sprintf("g%d", rng.IntN(4)), CallFile: "a.c", CallLine: 10*f + 1})
		for a := 0; a < 64; a += 8 {
			path := [][]*Elem{proc, loop, inl}[rng.IntN(3)]
			st := with(path, &Elem{Kind: ElemStmt, File: "a.c", Line: 10*f + rng.IntN(5)})
			x.entries = append(x.entries, indexEntry{uint64(64*f + a), uint64(64*f + a + 8), st})
		}
	}
	x.sort()
	return x
}

// dumpTrees is the merged tree and each thread's, node by node in the
// order of their children, with their values.
func dumpTrees(p *Profile) string {
	var b strings.Builder
	var dump func(n *Node, depth int)
	dump = func(n *Node, depth int) {
		fmt.Fprintf(&b, "%*s%s %d %d\n", depth, "", n.Label, n.Incl, n.Excl)
		for _, c := range n.Children {
			if c.Parent != n {
				fmt.Fprintf(&b, "%*s(the parent of %s is not %s)\n", depth, "", c.Label, n.Label)
			}
			dump(c, depth+1)
		}
	}
	dump(p.Root, 0)
	trees := p.ThreadTrees()
	for _, tid := range slices.Sorted(maps.Keys(trees)) {
		dump(trees[tid], 0)
	}
	return b.String()
}
