package unwind

import "testing"

// TestRootCache keeps answers in the table: each is read back until
// another call site of its slot replaces it, then is not found (isRoot
// asks the map); addresses the slot's form cannot hold are not kept.
func TestRootCache(t *testing.T) {
	var c rootCache
	if _, ok := c.get(0x1000); ok {
		t.Fatal("an empty table holds 0x1000")
	}
	// Two call sites of one slot.
	a := uint64(0x401234)
	b := a + 1
	for rootSlot(b) != rootSlot(a) {
		b++
	}
	for _, tc := range []struct {
		put    uint64
		answer bool
	}{{0, true}, {a, true}, {a, false}, {b, true}, {1<<62 - 1, false}} {
		c.put(tc.put, tc.answer)
		if r, ok := c.get(tc.put); !ok || r != tc.answer {
			t.Errorf("after put(%#x, %v): get = %v, %v", tc.put, tc.answer, r, ok)
		}
	}
	if _, ok := c.get(a); ok {
		t.Errorf("%#x is still kept after %#x took its slot", a, b)
	}
	c.put(1<<62, true)
	if _, ok := c.get(1 << 62); ok {
		t.Error("1<<62 is kept")
	}
	if r, ok := c.get(0); !ok || !r {
		t.Errorf("get(0) = %v, %v: want true, true", r, ok)
	}
}
