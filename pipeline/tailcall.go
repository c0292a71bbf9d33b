package pipeline

import (
	"sync"

	"bloop/isa"
	"bloop/loader"
)

// callTargets answers cfg.Options.Called for compat mode: whether a direct
// call somewhere in the image enters a procedure at t, its entry or its
// ppc64 local entry (Dyninst 12.3 takes a jump there for a tail call). The
// image's direct calls are found on the first question, by a linear sweep
// of every procedure's code; few images need it (a procedure that jumps
// back to its own entry).
type callTargets struct {
	img  *loader.Image
	once sync.Once
	set  map[uint64]bool
}

func (c *callTargets) called(t uint64) bool {
	f := c.img.FuncAt(t)
	if f == nil || f.PLT || t != f.Addr && t != f.LocalEntry {
		return false
	}
	c.once.Do(c.sweep)
	return c.set[t]
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
		for a := f.Addr; a < f.End; {
			b := c.img.Bytes(a, f.End)
			if len(b) == 0 {
				break
			}
			in := ar.Decode(b, a)
			if in.Kind == isa.Call {
				c.set[in.Target] = true
			}
			a += uint64(max(in.Len, ar.Align()))
		}
	}
}
