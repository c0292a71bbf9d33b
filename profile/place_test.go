package profile

import (
	"math/rand/v2"
	"slices"
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
