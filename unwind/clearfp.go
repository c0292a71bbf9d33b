package unwind

import (
	"bytes"
	"sort"
	"sync"
)

// clearFPs are the places of the ABI's frame-pointer clearing
// instruction in a module's code sections, found once, in the order of
// their addresses (the sections'), each with its section's bounds.
type clearFPs struct {
	once sync.Once
	at   []clearFPAt
	// near has a bit per 64 bytes of code from base, set where an
	// address can follow a place closely enough: most samples are
	// answered by one bit, the search is for the others.
	base uint64
	near []uint64
}

type clearFPAt struct{ addr, secLo, secHi uint64 }

// clearFPBefore reports whether the 48 bytes before addr (clipped to the
// section holding addr-48) hold the instruction pat, as
// bytes.Contains(m.Img.Bytes(addr-48, addr), pat) does. Every sample
// asks it of its sampled instruction, from every worker: a search in
// the instruction's places, found once without a lock after, costs no
// read of the code around each one, a cache miss at a random place in
// the module.
func (m *Module) clearFPBefore(addr uint64, pat []byte) bool {
	if len(pat) == 0 || addr < 48 {
		return false
	}
	c := &m.clearFP
	c.once.Do(func() { c.find(m, pat) })
	if b := (addr - c.base) >> 6; addr < c.base || b>>6 >= uint64(len(c.near)) || c.near[b>>6]&(1<<(b&63)) == 0 {
		return false
	}
	at, lo := c.at, addr-48
	i := sort.Search(len(at), func(i int) bool { return at[i].addr >= lo })
	// The first place at or after lo decides: a later one is further
	// from lo's section and nearer addr's end.
	if i == len(at) {
		return false
	}
	p := at[i]
	return p.secLo <= lo && p.addr+uint64(len(pat)) <= min(addr, p.secHi)
}

// find finds the places of pat and marks the addresses that can follow
// them: those in [place+len(pat), place+48].
func (c *clearFPs) find(m *Module, pat []byte) {
	c.at = clearFPPlaces(m, pat)
	if len(c.at) == 0 {
		return
	}
	c.base = c.at[0].addr
	c.near = make([]uint64, (c.at[len(c.at)-1].addr+48-c.base)>>12+1)
	for _, p := range c.at {
		for b := (p.addr + uint64(len(pat)) - c.base) >> 6; b <= (p.addr+48-c.base)>>6; b++ {
			c.near[b>>6] |= 1 << (b & 63)
		}
	}
}

// clearFPPlaces finds where pat begins in m's code sections, overlapping
// places included.
func clearFPPlaces(m *Module, pat []byte) []clearFPAt {
	var at []clearFPAt
	for _, s := range m.Img.Sections {
		for off := 0; ; {
			i := bytes.Index(s.Data[off:], pat)
			if i < 0 {
				break
			}
			at = append(at, clearFPAt{s.Addr + uint64(off+i), s.Addr, s.End()})
			off += i + 1
		}
	}
	return at
}
