package dyninst

import (
	"slices"
	"sync"

	"bloop/isa"
	"bloop/loader"
	"bloop/procs"
	"bloop/structure"
)

// callTargets answers cfg.Oracle.Called under a policy: whether a direct
// call somewhere in the image enters a procedure at t, its entry or its
// ppc64 local entry (Dyninst 12.3 takes a jump there for a tail call). The
// image's direct calls are found on the first question, by a linear sweep
// of every procedure's code; few images need it (a procedure that jumps
// back to its own entry).
type callTargets struct {
	img  *loader.Image
	once sync.Once
	set  map[uint64]bool
	// memo, when set, keeps the call targets of each extent swept, for
	// the next round of procedure discovery (parseMemo), whose image has
	// the same bytes and mostly the same extents.
	memo map[structure.Range][]uint64
}

func (c *callTargets) called(t uint64) bool {
	f := c.img.FuncAt(t)
	if f == nil || f.PLT || t != f.Addr && t != f.LocalEntry {
		return false
	}
	return c.targets()[t]
}

// targets are the image's direct call targets, swept on the first call.
func (c *callTargets) targets() map[uint64]bool {
	c.once.Do(c.sweep)
	return c.set
}

// preset gives c the targets found by an earlier sweep of the same
// procedures (procs.Table.CallTargets).
func (c *callTargets) preset(set map[uint64]bool) {
	c.once.Do(func() { c.set = set })
}

func (c *callTargets) sweep() {
	c.set = map[uint64]bool{}
	ar := isa.ForTOC(c.img.Machine, c.img.TOC)
	if ar == nil {
		return
	}
	for _, f := range c.img.Funcs {
		if f.PLT {
			continue
		}
		r := structure.Range{Lo: f.Addr, Hi: f.End}
		ts, ok := c.memo[r]
		if !ok {
			ts = callsIn(c.img, ar, r)
			if c.memo != nil {
				c.memo[r] = ts
			}
		}
		for _, t := range ts {
			c.set[t] = true
		}
	}
}

// callsIn lists the targets of the direct calls a linear sweep of r
// finds (procs.DirectCalls), decoding as the graphs do.
func callsIn(img *loader.Image, ar isa.Arch, r structure.Range) []uint64 {
	var ts []uint64
	at := func(a uint64) isa.FrameOp {
		b := img.Bytes(a, r.Hi)
		if len(b) == 0 {
			return isa.FrameOp{} // ends the sweep
		}
		in := ar.Decode(b, a)
		return isa.FrameOp{Flow: in.Kind, Target: in.Target, Len: uint8(max(in.Len, ar.Align()))}
	}
	procs.DirectCalls(r, at, nil, func(t uint64) { ts = append(ts, t) })
	return slices.Clip(ts)
}
