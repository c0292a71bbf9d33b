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
	m.clearFP.once.Do(func() { m.clearFP.at = clearFPPlaces(m, pat) })
	at, lo := m.clearFP.at, addr-48
	i := sort.Search(len(at), func(i int) bool { return at[i].addr >= lo })
	// The first place at or after lo decides: a later one is further
	// from lo's section and nearer addr's end.
	if i == len(at) {
		return false
	}
	c := at[i]
	return c.secLo <= lo && c.addr+uint64(len(pat)) <= min(addr, c.secHi)
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
