package unwind

import "errors"

// Frame is the part of a frame's machine state the unwinder tracks.
type Frame struct {
	PC, SP, BP uint64
	// DI is rdi, known (HasDI) only in the sampled frame: the return
	// address of a frame that popped it there.
	DI    uint64
	HasDI bool
	// LR is the link register (aarch64's x30, ppc64's LR), known (HasLR)
	// only in the sampled frame: the return address of a leaf, or of a
	// procedure before its prologue saves it.
	LR    uint64
	HasLR bool
}

// Memory reads one 8-byte word of the sampled stack; ok is false outside
// the copy.
type Memory func(addr uint64) (v uint64, ok bool)

// Errors of a step.
var (
	ErrNoRecipe  = errors.New("no unwind recipe")
	ErrTruncated = errors.New("frame lies beyond the copied stack")
	ErrBadFrame  = errors.New("caller's frame is not above the callee's")
)

// Step computes the caller's frame from f with recipe r.
func (r Recipe) Step(f Frame, mem Memory) (Frame, error) {
	var cfa uint64
	switch r.CFA {
	case RegSP:
		cfa = uint64(int64(f.SP) + r.CFAOff)
	case RegBP:
		cfa = uint64(int64(f.BP) + r.CFAOff)
	default:
		return Frame{}, ErrNoRecipe
	}
	var ra uint64
	switch {
	case r.RAInDI:
		if !f.HasDI || cfa < f.SP {
			return Frame{}, ErrBadFrame
		}
		ra = f.DI
	case r.RAInLR:
		if !f.HasLR || cfa < f.SP {
			return Frame{}, ErrBadFrame
		}
		ra = f.LR
	default:
		// Stacks grow down: the caller's SP is above, except where the
		// return address is kept in the caller's frame (ppc64's LR save
		// word), stored before the callee allocates its own.
		if cfa < f.SP || cfa == f.SP && r.RAOff < 0 {
			return Frame{}, ErrBadFrame
		}
		var ok bool
		if ra, ok = mem(uint64(int64(cfa) + r.RAOff)); !ok {
			return Frame{}, ErrTruncated
		}
		if r.RABits != 0 {
			ra &= 1<<r.RABits - 1 // the pointer-authentication code stripped
		}
	}
	var ok bool
	bp := f.BP
	if r.BPSaved {
		if bp, ok = mem(uint64(int64(cfa) + r.BPOff)); !ok {
			return Frame{}, ErrTruncated
		}
	}
	return Frame{PC: ra, SP: cfa, BP: bp}, nil
}

// BackChainStep unwinds a ppc64 frame by its ABI's back chain, where no
// recipe does: [SP] is the caller's SP, where the callee's frame has been
// allocated, and the caller's frame holds the return address in its LR
// save word at +16. A null back chain is the outermost frame's.
func BackChainStep(f Frame, mem Memory) (Frame, error) {
	cfa, ok := mem(f.SP)
	if !ok {
		return Frame{}, ErrTruncated
	}
	if cfa <= f.SP {
		return Frame{}, ErrBadFrame
	}
	ra, ok := mem(cfa + 16)
	if !ok {
		return Frame{}, ErrTruncated
	}
	return Frame{PC: ra, SP: cfa, BP: f.BP}, nil
}
