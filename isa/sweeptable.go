package isa

// Jump tables seen from a linear sweep, for the inference of procedure
// bounds in stripped code (package procs): its protected intervals cover a
// table's targets, which belong to the jumping procedure.

// SweepInst is one instruction of a linear sweep.
type SweepInst struct {
	Addr uint64
	Op   FrameOp
}

// End is the address after the instruction.
func (in *SweepInst) End() uint64 { return in.Addr + uint64(in.Op.Len) }

// sweepTabler is implemented by the instruction sets with a reader of
// their own for a sweep's tables (x86-64's compare-and-load idioms).
type sweepTabler interface {
	sweepTable(mem Memory, insts []SweepInst, i int, lo, hi uint64) []uint64
}

// SweepTable resolves the jump table of the indirect jump insts[i] of a
// linear sweep of [lo, hi), whose targets must lie in [lo, hi): x86-64's
// own reader, else the instruction set's JumpTable on the instructions
// before the jump, as many as cfg gives it (TableReach; exact on
// fixed-width sets, where the sweep decodes what runs).
func SweepTable(a Arch, mem Memory, insts []SweepInst, i int, lo, hi uint64) []uint64 {
	if st, ok := a.(sweepTabler); ok {
		return st.sweepTable(mem, insts, i, lo, hi)
	}
	from := max(0, i-TableReach(a))
	path := make([]Inst, 0, i+1-from)
	for _, in := range insts[from : i+1] {
		path = append(path, Inst{Addr: in.Addr, Len: int(in.Op.Len), Kind: in.Op.Flow, Target: in.Op.Target})
	}
	to := Targets{
		Valid: func(t uint64) bool { return lo <= t && t < hi },
		Start: func(t uint64) bool { return sweepStart(insts, t) },
	}
	return a.JumpTable(mem, path, path[len(path)-1], to)
}

// sweepStart reports whether an instruction of the sweep insts (sorted by
// address) starts at t.
func sweepStart(insts []SweepInst, t uint64) bool {
	lo, hi := 0, len(insts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if insts[m].Addr < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(insts) && insts[lo].Addr == t
}
