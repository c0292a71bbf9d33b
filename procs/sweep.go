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
// A start added resynchronizes the rest of the sweep.
func (f *finder) callTargets(r structure.Range) {
	ge, _ := f.arch.(isa.GlobalEntries)
	DirectCalls(r, f.frameAt, f.known, func(t uint64) {
		if t == 0 {
			return
		}
		if ge != nil {
			t = ge.GlobalEntry(f.img, t)
		}
		f.add(t, Call)
	})
}

// decode calls visit for each instruction of a linear sweep of r.
func (f *finder) decode(r structure.Range, visit func(uint64, isa.FrameOp)) {
	Sweep(r, f.frameAt, f.known, visit)
}

// frameAt is the frame decoder's reading of the instruction at a. Bytes
// stops at a's section's end (damaged files have sections that overlap).
func (f *finder) frameAt(a uint64) isa.FrameOp {
	return f.framer.Frame(f.img.Bytes(a, a+uint64(f.arch.MaxLen())), a)
}

// Sweep visits the instructions of a linear sweep of r, as op reads the
// one at an address: the sweep steps by its Len, and ends at a Len of 0.
// Where known (nil: nowhere) reports a start that a step would pass over,
// the sweep resynchronizes there.
func Sweep(r structure.Range, op func(a uint64) isa.FrameOp, known func(uint64) bool, visit func(uint64, isa.FrameOp)) {
	for a := r.Lo; a < r.Hi; {
		o := op(a)
		if o.Len == 0 {
			return
		}
		visit(a, o)
		next := a + uint64(o.Len)
		for k := a + 1; known != nil && k < next && k < r.Hi; k++ {
			if known(k) {
				next = k
				break
			}
		}
		a = next
	}
}

// DirectCalls is the one sweep for direct calls: it calls add with the
// target of each direct call a linear sweep of r finds (Sweep), in
// address order. Procedure inference sweeps with the frame decoder and
// adds the targets as starts, which resynchronize the rest of the sweep;
// Dyninst's tail-call test (package dyninst) sweeps each procedure with
// the control-flow decoder.
func DirectCalls(r structure.Range, op func(a uint64) isa.FrameOp, known func(uint64) bool, add func(t uint64)) {
	Sweep(r, op, known, func(_ uint64, o isa.FrameOp) {
		if o.Flow == isa.Call {
			add(o.Target)
		}
	})
}
