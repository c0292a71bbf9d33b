package unwind

import "sync/atomic"

// isRoot is asked of each call site on every sample's stack, by every
// unwinding worker, so its answers are kept in a direct-mapped table read
// without a lock, in front of the map that keeps them all: the map's read
// lock, whose counter every reader writes, moved between the cores on
// each call (a fifth of the CPU of a report of a frame-pointer perf.data
// of deep, repeated stacks). A slot holds one call site's answer; another
// call site of the same slot replaces it. The table starts small (a
// system-wide profile has call sites in hundreds of modules, most of them
// few) and grows fourfold, its answers dropped (the map has them), each
// time it has missed as many times as it has slots.

const (
	rootMinBits = 10 // 8 KiB
	rootMaxBits = 16 // 512 KiB
)

type rootCache struct {
	t      atomic.Pointer[rootTable]
	misses atomic.Int64 // since the table was made
}

type rootTable struct {
	bits  uint
	slots []atomic.Uint64
}

// slot is addr's slot: Fibonacci hashing, as call sites are spread
// unevenly in the low bits.
func (t *rootTable) slot(addr uint64) *atomic.Uint64 {
	return &t.slots[addr*0x9E3779B97F4A7C15>>(64-t.bits)]
}

// get returns the answer kept for addr; ok is false when the table does
// not hold it. A slot holds (addr+1)<<1 | answer, 0 when empty.
func (c *rootCache) get(addr uint64) (answer, ok bool) {
	t := c.t.Load()
	if t == nil || addr >= 1<<62 {
		return false, false
	}
	v := t.slot(addr).Load()
	if v>>1 != addr+1 {
		return false, false
	}
	return v&1 == 1, true
}

// put keeps addr's answer, after get missed it.
func (c *rootCache) put(addr uint64, answer bool) {
	if addr >= 1<<62 {
		return
	}
	t := c.t.Load()
	if t == nil || t.bits < rootMaxBits && c.misses.Add(1) > int64(len(t.slots)) {
		bits := uint(rootMinBits)
		if t != nil {
			bits = min(t.bits+2, rootMaxBits)
		}
		if c.t.CompareAndSwap(t, &rootTable{bits: bits, slots: make([]atomic.Uint64, 1<<bits)}) {
			c.misses.Store(0)
		}
		t = c.t.Load()
	}
	v := (addr + 1) << 1
	if answer {
		v |= 1
	}
	t.slot(addr).Store(v)
}
