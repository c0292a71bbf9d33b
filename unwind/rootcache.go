package unwind

import "sync/atomic"

// isRoot is asked of each call site on every sample's stack, by every
// unwinding worker, so its answers are kept in a direct-mapped table read
// without a lock, in front of the map that keeps them all: the map's read
// lock, whose counter every reader writes, moved between the cores on
// each call (a fifth of the CPU of a report of a frame-pointer perf.data
// of deep, repeated stacks). A slot holds one call site's answer; another
// call site of the same slot replaces it.

// rootSlots is the table's size: a sampled module's call sites, a few
// thousand, fit with few sharing a slot (256 KiB per module that has
// call sites sampled).
const rootSlots = 1 << 15

type rootCache struct {
	slots atomic.Pointer[[rootSlots]atomic.Uint64]
}

// rootSlot is addr's slot: Fibonacci hashing, as call sites are spread
// unevenly in the low bits.
func rootSlot(addr uint64) uint64 { return addr * 0x9E3779B97F4A7C15 >> (64 - 15) }

// get returns the answer kept for addr; ok is false when the table does
// not hold it. A slot holds (addr+1)<<1 | answer, 0 when empty.
func (c *rootCache) get(addr uint64) (answer, ok bool) {
	t := c.slots.Load()
	if t == nil || addr >= 1<<62 {
		return false, false
	}
	v := t[rootSlot(addr)].Load()
	if v>>1 != addr+1 {
		return false, false
	}
	return v&1 == 1, true
}

// put keeps addr's answer.
func (c *rootCache) put(addr uint64, answer bool) {
	if addr >= 1<<62 {
		return
	}
	t := c.slots.Load()
	if t == nil {
		c.slots.CompareAndSwap(nil, new([rootSlots]atomic.Uint64))
		t = c.slots.Load()
	}
	v := (addr + 1) << 1
	if answer {
		v |= 1
	}
	t[rootSlot(addr)].Store(v)
}
