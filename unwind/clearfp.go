package unwind

import (
	"bytes"
	"sort"
	"sync"

	"bloop/loader"
)

// clearFPs are the addresses of the ABI's frame-pointer clearing
// instruction in a module's code sections, found once per section.
type clearFPs struct {
	mu  sync.Mutex
	pos map[*loader.Section][]uint64
}

// clearFPBefore reports whether the 48 bytes before addr (clipped to the
// section holding addr-48) hold the instruction pat, as
// bytes.Contains(m.Img.Bytes(addr-48, addr), pat) does. Every sample
// asks it of its sampled instruction: a search in the instruction's
// positions costs no read of the code around each one, a cache miss at
// a random place in the module (most of the time a report of a
// frame-pointer perf.data spent there).
func (m *Module) clearFPBefore(addr uint64, pat []byte) bool {
	lo := addr - 48
	s := m.Img.SectionAt(lo)
	if s == nil || len(pat) == 0 {
		return false
	}
	hi := addr
	if hi > s.End() || hi < lo {
		hi = s.End()
	}
	ps := m.clearFP.positions(s, pat)
	i := sort.Search(len(ps), func(i int) bool { return ps[i] >= lo })
	return i < len(ps) && ps[i]+uint64(len(pat)) <= hi
}

// positions returns the sorted addresses where pat begins in s,
// overlapping ones included.
func (c *clearFPs) positions(s *loader.Section, pat []byte) []uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pos[s]; ok {
		return ps
	}
	var ps []uint64
	for off := 0; ; {
		i := bytes.Index(s.Data[off:], pat)
		if i < 0 {
			break
		}
		ps = append(ps, s.Addr+uint64(off+i))
		off += i + 1
	}
	if c.pos == nil {
		c.pos = map[*loader.Section][]uint64{}
	}
	c.pos[s] = ps
	return ps
}
