package profile

import (
	"bloop/sample"
	"bloop/unwind"
)

// Frame is one frame of an unwound sample: the module and the file
// address of the instruction (the PC in the innermost frame, the call
// site, return address minus one, in the others).
type Frame struct {
	Mod  *Module
	Addr uint64
}

// Outcome classifies an unwind (package unwind walks the stacks).
type Outcome = unwind.Outcome

// Unwind outcomes.
const (
	Complete  = unwind.Complete
	Truncated = unwind.Truncated
	Failed    = unwind.Failed
)

// stackOf is what the walk of s starts from.
func stackOf(s *sample.Sample) unwind.Stack {
	return unwind.Stack{Regs: unwind.Frame{PC: s.IP, SP: s.SP, BP: s.BP, DI: s.DI, HasDI: s.HasDI, LR: s.LR, HasLR: s.HasLR},
		Copy: s.Stack, Limit: int(s.StackSize)}
}

// lookupAt is the walk's view of process pid's modules at time t.
func (sp *space) lookupAt(pid uint32, t uint64) unwind.Lookup {
	n := sp.near(pid, t)
	return func(pc uint64) (*unwind.Module, uint64, bool) {
		m, addr, ok := n.lookup(pc)
		if !ok {
			return nil, 0, false
		}
		return m.Unw, addr, true
	}
}

// framesAt places run-time addresses (innermost first) of process pid
// at time t in their modules, up to the first outside every mapping.
func (sp *space) framesAt(pid uint32, t uint64, pcs []uint64, frames []Frame) []Frame {
	n := sp.near(pid, t)
	for _, pc := range pcs {
		m, addr, ok := n.lookup(pc)
		if !ok {
			break
		}
		frames = append(frames, Frame{Mod: m, Addr: addr})
	}
	return frames
}
