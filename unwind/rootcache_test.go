package unwind

import "testing"

// TestRootCache keeps answers in the table: each is read back until
// another call site of its slot replaces it, then is not found (isRoot
// asks the map); addresses the slot's form cannot hold are not kept; the
// table grows fourfold each time it has missed as often as it has slots,
// up to its largest.
func TestRootCache(t *testing.T) {
	var c rootCache
	if _, ok := c.get(0x1000); ok {
		t.Fatal("an empty table holds 0x1000")
	}
	c.put(0, true)
	tab := c.t.Load()
	if tab == nil || tab.bits != rootMinBits {
		t.Fatalf("the first table: %+v, want %d bits", tab, rootMinBits)
	}
	// Two call sites of one slot.
	a := uint64(0x401234)
	b := a + 1
	for tab.slot(b) != tab.slot(a) {
		b++
	}
	for _, tc := range []struct {
		put    uint64
		answer bool
	}{{a, true}, {a, false}, {b, true}, {1<<62 - 1, false}} {
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
	if c.t.Load() != tab {
		t.Fatal("the table grew after a few misses")
	}
	for bits := uint(rootMinBits + 2); bits <= rootMaxBits+2; bits += 2 {
		for i := range 1<<(bits-2) + 1 {
			addr := uint64(bits)<<40 | uint64(i)
			c.put(addr, i%3 == 0)
			if r, ok := c.get(addr); !ok || r != (i%3 == 0) {
				t.Fatalf("put(%#x) then get = %v, %v", addr, r, ok)
			}
		}
		if got, want := c.t.Load().bits, min(bits, rootMaxBits); got != want {
			t.Fatalf("after %d misses the table has %d bits, want %d", 1<<(bits-2)+1, got, want)
		}
	}
}
