package isa

// x86-64 jump tables seen from a linear sweep (procs' inference): the two
// shapes gcc and clang emit, read from the frame operations of the sweep,
// since a linear sweep of x86-64 may decode bytes that never run and the
// value analysis of JumpTable wants the paths that do.

import "encoding/binary"

// sweepTable resolves the table of the indirect jump insts[i]: absolute
// entries (jmp *T(,idx,8)) and, in position-independent code, 4-byte
// offsets from the table's address loaded by a nearby lea T(%rip).
func (amd64) sweepTable(mem Memory, insts []SweepInst, i int, lo, hi uint64) []uint64 {
	// The table's size comes from the range check before the jump
	// (cmp idx,N; ja default); without one the table is left alone.
	n := uint64(0)
	for j := i - 1; j >= 0 && j >= i-12; j-- {
		if c := insts[j].Op.CmpImm; c > 0 && c < 4096 && j+1 < i && insts[j+1].Op.Flow == CondJump {
			n = uint64(c) + 1
			break
		}
	}
	if n == 0 {
		return nil
	}
	in := func(t uint64) bool { return lo <= t && t < hi }
	var out []uint64
	if t8 := insts[i].Op.Table8; t8 != 0 {
		for k := uint64(0); k < n; k++ {
			b := mem.ReadData(t8+8*k, 8)
			if b == nil {
				break
			}
			t := binary.LittleEndian.Uint64(b)
			if !in(t) {
				break
			}
			out = append(out, t)
		}
		return out
	}
	for j := i - 1; j >= 0 && j >= i-8; j-- {
		if base := insts[j].Op.PCRel; base != 0 {
			return relTable(mem, base, n, in)
		}
	}
	// Compilers hoist the table's lea out of a loop around the switch:
	// look further back for one whose n entries all land on instructions
	// of the sweep (and whose base is data: ReadData of code is not nil,
	// so a code address is checked by its bytes being instructions).
	for j := i - 9; j >= 0 && j >= i-256; j-- {
		base := insts[j].Op.PCRel
		if base == 0 || len(mem.Bytes(base, base+1)) > 0 {
			continue
		}
		ts := relTable(mem, base, n, in)
		if uint64(len(ts)) == n && allStarts(insts, ts) {
			return ts
		}
	}
	return nil
}

// relTable reads up to n 4-byte offsets from base while they land in code
// the predicate in accepts.
func relTable(mem Memory, base, n uint64, in func(uint64) bool) []uint64 {
	var out []uint64
	for k := uint64(0); k < n; k++ {
		b := mem.ReadData(base+4*k, 4)
		if b == nil {
			break
		}
		t := base + uint64(int64(int32(binary.LittleEndian.Uint32(b))))
		if !in(t) {
			break
		}
		out = append(out, t)
	}
	return out
}

// allStarts reports whether every address of ts begins an instruction of
// the sweep insts.
func allStarts(insts []SweepInst, ts []uint64) bool {
	for _, t := range ts {
		if !sweepStart(insts, t) {
			return false
		}
	}
	return true
}
