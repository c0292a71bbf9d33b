package cfg

import (
	"slices"
	"testing"
)

// TestInstIndex: addresses inside and beyond the extent are found again,
// and order lists them by address, those below the extent first.
func TestInstIndex(t *testing.T) {
	const lo, hi = 0x1000, 0x1040
	addrs := []uint64{0x1010, 0x2000, 0x1000, 0x103f, 0x0fff, 0x1040, 0x800, 0x1001}
	x := newInstIndex(lo, hi)
	s := newAddrSet(lo, hi)
	for i, a := range addrs {
		x.set(a, int32(i))
		s.add(a)
	}
	for i, a := range addrs {
		if j, ok := x.get(a); !ok || j != int32(i) {
			t.Errorf("%#x: got %d %v, want %d", a, j, ok, i)
		}
		if !s.has(a) {
			t.Errorf("%#x: not in the set", a)
		}
	}
	for _, a := range []uint64{0x1002, 0x0ffe, 0x1041, 0} {
		if _, ok := x.get(a); ok || s.has(a) {
			t.Errorf("%#x: found, never added", a)
		}
	}
	var got []uint64
	for _, i := range x.order(len(addrs)) {
		got = append(got, addrs[i])
	}
	want := slices.Sorted(slices.Values(addrs))
	if !slices.Equal(got, want) {
		t.Errorf("order %#x, want %#x", got, want)
	}
}
