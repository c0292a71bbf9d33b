package procs

// The linear sweep of the code no symbol covers, through the instruction
// set's frame decoder (isa.Framer).

import (
	"bloop/isa"
	"bloop/structure"
)

// sweep decodes r linearly, resynchronizing at known starts the sweep
// would step over.
func (f *finder) sweep(r structure.Range) []isa.SweepInst {
	// Instructions average 3.5 to 4 bytes on x86-64 (Go's 3.8), 4 on the
	// fixed-width sets: growing a slice of millions costs more than the slack.
	avg := uint64(3)
	if f.arch.Align() > 1 {
		avg = uint64(f.arch.Align())
	}
	insts := make([]isa.SweepInst, 0, (r.Hi-r.Lo)/avg+16)
	f.decode(r, func(a uint64, op isa.FrameOp) { insts = append(insts, isa.SweepInst{Addr: a, Op: op}) })
	return insts
}

// callTargets adds the targets of r's direct calls as starts. Even a call
// to the next instruction counts: x86-64 code reads the pc with lea, so
// that is a call that does not return, to a procedure placed after it. A
// call to a ppc64 local entry starts the procedure at its global entry.
func (f *finder) callTargets(r structure.Range) {
	ge, _ := f.arch.(isa.GlobalEntries)
	f.decode(r, func(_ uint64, op isa.FrameOp) {
		if op.Flow == isa.Call && op.Target != 0 {
			t := op.Target
			if ge != nil {
				t = ge.GlobalEntry(f.img, t)
			}
			f.add(t, Call)
		}
	})
}

// decode calls visit for each instruction of a linear sweep of r.
func (f *finder) decode(r structure.Range, visit func(uint64, isa.FrameOp)) {
	n := uint64(f.arch.MaxLen())
	for a := r.Lo; a < r.Hi; {
		// Bytes stops at a's section's end (damaged files have sections
		// that overlap).
		op := f.framer.Frame(f.img.Bytes(a, a+n), a)
		visit(a, op)
		next := a + uint64(op.Len)
		for k := a + 1; k < next && k < r.Hi; k++ {
			if f.known(k) {
				next = k
				break
			}
		}
		a = next
	}
}
