package procs

// The x86-64 parts of the inference: the linear sweep and the shapes of
// jump tables. (Not named *_amd64.go: binaries are analysed on any host.)

import (
	"encoding/binary"
	"sort"

	"bloop/isa"
	"bloop/loader"
)

// decoded is one instruction of a linear sweep.
type decoded struct {
	addr uint64
	op   isa.FrameOp
}

// sweep decodes r linearly, resynchronizing at known starts the sweep
// would step over.
func (f *finder) sweep(r loader.Range) []decoded {
	insts := make([]decoded, 0, (r.Hi-r.Lo)/3+16) // instructions average 3.5 to 4 bytes (Go's 3.8): growing a slice of millions costs more than the slack
	f.decode(r, func(a uint64, op isa.FrameOp) { insts = append(insts, decoded{a, op}) })
	return insts
}

// callTargets adds the targets of r's direct calls as starts. Even a call
// to the next instruction counts: x86-64 code reads the pc with lea, so
// that is a call that does not return, to a procedure placed after it.
func (f *finder) callTargets(r loader.Range) {
	f.decode(r, func(_ uint64, op isa.FrameOp) {
		if op.Flow == isa.Call && op.Target != 0 {
			f.add(op.Target, Call)
		}
	})
}

// decode calls visit for each instruction of a linear sweep of r.
func (f *finder) decode(r loader.Range, visit func(uint64, isa.FrameOp)) {
	for a := r.Lo; a < r.Hi; {
		// Bytes stops at a's section's end (damaged files have sections
		// that overlap).
		op := f.framer.Frame(f.img.Bytes(a, a+15), a)
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

// tableTargets resolves the jump table of the indirect jump insts[i], in
// the two shapes gcc and clang emit: absolute entries (jmp *T(,idx,8)) and,
// in position-independent code, 4-byte offsets from the table's address
// loaded by a nearby lea T(%rip).
func tableTargets(img *loader.Image, insts []decoded, i int, r loader.Range) []uint64 {
	// The table's size comes from the range check before the jump
	// (cmp idx,N; ja default); without one the table is left alone.
	n := uint64(0)
	for j := i - 1; j >= 0 && j >= i-12; j-- {
		if c := insts[j].op.CmpImm; c > 0 && c < 4096 && j+1 < i && insts[j+1].op.Flow == isa.CondJump {
			n = uint64(c) + 1
			break
		}
	}
	if n == 0 {
		return nil
	}
	in := func(t uint64) bool { return r.Lo <= t && t < r.Hi }
	var out []uint64
	if t8 := insts[i].op.Table8; t8 != 0 {
		for k := uint64(0); k < n; k++ {
			b := img.ReadData(t8+8*k, 8)
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
		if base := insts[j].op.PCRel; base != 0 {
			return relTable(img, base, n, in)
		}
	}
	// Compilers hoist the table's lea out of a loop around the switch:
	// look further back for one whose n entries all land on instructions
	// of the sweep.
	for j := i - 9; j >= 0 && j >= i-256; j-- {
		base := insts[j].op.PCRel
		if base == 0 || img.IsCode(base) {
			continue
		}
		ts := relTable(img, base, n, in)
		if uint64(len(ts)) == n && allStarts(insts, ts) {
			return ts
		}
	}
	return nil
}

// relTable reads up to n 4-byte offsets from base while they land in code
// the predicate in accepts.
func relTable(img *loader.Image, base, n uint64, in func(uint64) bool) []uint64 {
	var out []uint64
	for k := uint64(0); k < n; k++ {
		b := img.ReadData(base+4*k, 4)
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
func allStarts(insts []decoded, ts []uint64) bool {
	for _, t := range ts {
		k := sort.Search(len(insts), func(k int) bool { return insts[k].addr >= t })
		if k == len(insts) || insts[k].addr != t {
			return false
		}
	}
	return true
}
