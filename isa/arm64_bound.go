package isa

// The bound of an AArch64 jump table's index.

import (
	"slices"
	"strings"

	"golang.org/x/arch/arm64/arm64asm"
)

// arm64Bound returns the number of entries of the table that xs[load]
// indexes with register idx, or 0 when unknown. It looks above the load
// for an unsigned branch on the path, `cmp wC, #n` setting its flags,
// where the index is the compared value, or that value narrowed (and,
// uxtb, ubfx, lsr):
//
//	cmp w0, #7; b.hi; ...; ldrb w1, [x1, w0, uxtw]           8 entries
//	cmp w0, #7; b.ls (taken); ...                            8
//	cmp w0, #8; b.hs; ...                                    8
//	and w15, w14, #0xffff; cmp w15, #7; b.hi; and x14, x14, #0xffff; ...
//	ldrb w16, [x13, x14]      (clang: both are w14 & 0xffff) 8
//
// Without a compare, a mask on the index bounds it (and w0, w0, #7: 8).
// Values are compared by where they were computed (value), so a register
// changed between the compare and the load bounds nothing. direct reports
// what Dyninst 12.3 bounds: the index is the compared register's value
// itself, or a copy of it, not a value computed alike (clang's and-ed
// twins), and the compare reads it at the width the load indexes with
// (idxX: a 64-bit index register). Its facts are kept per register as
// named: `cmp w15, #9` says nothing of x15 (clang -O2's
// `ldrb w17, [x14, x15]` after `ldrb w15, ...; cmp w15, #9`), while gcc's
// `cmp w0` bounds its `[x1, w0, uxtw]`.
//
// With dyninst, the compare may also be a `subs` that keeps the
// difference (subs x8, x8, #9), and a value may pass through a stack
// slot (str x8, [sp]; ...; ldr x11, [sp]), as Dyninst's slicing follows
// them: clang -O0 keeps the switch value on the stack.
func arm64Bound(xs []a64, load, idx int, idxX, dyninst bool) (count int, direct bool) {
	index := valueAt(xs, load, idx, dyninst)
	for i := load - 1; i >= 0 && index != nil; i-- {
		cmp, reg, cmpX, n, ok := unsignedBoundARM64(xs, i, dyninst)
		if !ok {
			continue
		}
		compared := valueAt(xs, cmp, reg, dyninst)
		for v := index; v != nil; v = v.src {
			if v.equal(compared) {
				return int(index.max(v, uint64(n-1))) + 1, v == index && v.op == 0 && cmpX == idxX
			}
		}
	}
	if m := index.max(nil, ^uint64(0)); m < maxTable {
		return int(m) + 1, false
	}
	return 0, false
}

// value is what a register holds: the result of the instruction at def
// (noWrite: before the path) or a narrowing of another value: src shifted
// right, then masked.
type value struct {
	reg, def int
	op       arm64asm.Op // and, ubfx, lsr, uxtb, uxth; 0 for the result of def
	imm      uint64      // what tells ops apart
	shift    uint
	mask     uint64
	src      *value
}

// max is the largest value v can hold when base, a value of v's narrowing
// chain (nil: the chain's end), is at most m.
func (v *value) max(base *value, m uint64) uint64 {
	if v == nil || v == base || v.op == 0 {
		return m
	}
	return min(v.src.max(base, m)>>v.shift, v.mask)
}

func (v *value) equal(w *value) bool {
	for ; v != nil && w != nil; v, w = v.src, w.src {
		if v.op != w.op || v.imm != w.imm || v.op == 0 && (v.reg != w.reg || v.def != w.def) {
			return false
		}
	}
	return v == nil && w == nil
}

// valueAt is the value register r holds before xs[i], looking through
// copies (and, with slots, stack slots); nil when a call may have
// changed it.
func valueAt(xs []a64, i, r int, slots bool) *value {
	for depth := 0; depth < 16; depth++ {
		d := lastWrite(xs, i, r)
		if d == clobbered {
			return nil
		}
		if d == noWrite {
			return &value{reg: r, def: noWrite}
		}
		x := xs[d]
		src := argReg(x.Args[1])
		switch x.Op {
		case arm64asm.MOV, arm64asm.SXTW:
			if _, ok := x.Args[1].(arm64asm.Reg); ok {
				i, r = d, src
				continue // a copy: mov x1, x0; mov w1, w0; sxtw x1, w0
			}
		case arm64asm.LDR:
			if st, ok := stackStore(xs, d); slots && ok {
				i, r = st, argReg(xs[st].Args[0])
				continue // reloaded from where it was stored
			}
		case arm64asm.AND:
			if m, ok := x.Args[2].(arm64asm.Imm64); ok {
				return narrow(xs, d, src, x.Op, m.Imm, 0, m.Imm, slots)
			}
		case arm64asm.UXTB:
			return narrow(xs, d, src, arm64asm.AND, 0xff, 0, 0xff, slots)
		case arm64asm.UXTH:
			return narrow(xs, d, src, arm64asm.AND, 0xffff, 0, 0xffff, slots)
		case arm64asm.LSR:
			if s, ok := x.Args[2].(arm64asm.Imm); ok && s.Imm < 64 {
				return narrow(xs, d, src, x.Op, uint64(s.Imm), uint(s.Imm), ^uint64(0), slots)
			}
		case arm64asm.UBFX:
			lsb, ok1 := x.Args[2].(arm64asm.Imm)
			width, ok2 := x.Args[3].(arm64asm.Imm)
			if ok1 && ok2 && lsb.Imm < 64 && width.Imm < 64 {
				return narrow(xs, d, src, x.Op, uint64(lsb.Imm)<<8|uint64(width.Imm), uint(lsb.Imm), 1<<width.Imm-1, slots)
			}
		}
		return &value{reg: r, def: d}
	}
	return nil
}

func narrow(xs []a64, d, src int, op arm64asm.Op, imm uint64, shift uint, mask uint64, slots bool) *value {
	s := valueAt(xs, d, src, slots)
	if s == nil {
		return nil
	}
	return &value{op: op, imm: imm, shift: shift, mask: mask, src: s}
}

// Condition codes of b.cond.
const (
	condHS = 2 // unsigned >=
	condLO = 3 // unsigned <
	condHI = 8 // unsigned >
	condLS = 9 // unsigned <=
)

// unsignedBoundARM64 recognizes xs[i] as an unsigned b.cond whose flags
// come from `cmp reg, #n` at position cmp (with subs, `subs xD, reg, #n`)
// and that bounds reg (a 64-bit register: regX) to count values on the
// edge the path follows: b.hi and b.hs fall through in range, b.ls and
// b.lo jump.
func unsignedBoundARM64(xs []a64, i int, subs bool) (cmp, reg int, regX bool, count int, ok bool) {
	x := xs[i]
	if x.Op != arm64asm.B || x.Enc&0xff000010 != 0x54000000 || i+1 >= len(xs) {
		return 0, 0, false, 0, false
	}
	taken := xs[i+1].addr != x.addr+4
	inclusive := false // the compared value itself is in range
	switch c := x.Enc & 0xf; {
	case c == condHI && !taken, c == condLS && taken:
		inclusive = true
	case c == condHS && !taken, c == condLO && taken:
	default:
		return 0, 0, false, 0, false
	}
	k := i - 1
	for k >= 0 && !setsFlags[xs[k].Op] && xs[k].Op != arm64asm.BL && xs[k].Op != arm64asm.BLR {
		k--
	}
	// cmp (immediate) is subs with the zero register as destination.
	if k < 0 || xs[k].Enc&0x1f000000 != 0x11000000 {
		return 0, 0, false, 0, false
	}
	compared := 0 // the operand compared
	switch {
	case xs[k].Op == arm64asm.CMP:
	case xs[k].Op == arm64asm.SUBS && subs:
		compared = 1
	default:
		return 0, 0, false, 0, false
	}
	n := int(addImm(xs[k].Enc))
	if inclusive {
		n++
	}
	if n <= 0 || n > maxTable {
		return 0, 0, false, 0, false
	}
	a := xs[k].Args[compared]
	wide := false
	switch r := a.(type) {
	case arm64asm.Reg:
		wide = isX(r)
	case arm64asm.RegSP:
		wide = isX(arm64asm.Reg(r))
	}
	return k, argReg(a), wide, n, true
}

// stackStore is the store whose value the load xs[d] reads back: the
// last store before it to the same stack slot (`str xS, [sp, #off]`, then
// `ldr xR, [sp, #off]`, of one size), with no call, no other store to
// the slot's base and no change of the base in between.
func stackStore(xs []a64, d int) (int, bool) {
	ld, ok := xs[d].Args[1].(arm64asm.MemImmediate)
	if !ok || ld.Mode != arm64asm.AddrOffset || regSPNum(ld.Base) != regSP {
		return 0, false
	}
	size := xs[d].Enc >> 30
	for j := d - 1; j >= 0; j-- {
		x := xs[j]
		if x.Op == arm64asm.BL || x.Op == arm64asm.BLR {
			return 0, false
		}
		if slices.Contains(writes(x.Inst), regSP) {
			return 0, false
		}
		if !strings.HasPrefix(x.Op.String(), "ST") {
			continue
		}
		m, ok := x.Args[1].(arm64asm.MemImmediate)
		if !ok || regSPNum(m.Base) != regSP {
			return 0, false // another store may write the slot
		}
		if m != ld {
			continue // another slot
		}
		if x.Op != arm64asm.STR || m.Mode != arm64asm.AddrOffset || x.Enc>>30 != size {
			return 0, false
		}
		return j, true
	}
	return 0, false
}

// setsFlags are the instructions that write the condition flags.
var setsFlags = map[arm64asm.Op]bool{
	arm64asm.CMP: true, arm64asm.CMN: true, arm64asm.TST: true, arm64asm.SUBS: true, arm64asm.ADDS: true,
	arm64asm.ANDS: true, arm64asm.BICS: true, arm64asm.NEGS: true, arm64asm.NGCS: true, arm64asm.ADCS: true,
	arm64asm.SBCS: true, arm64asm.CCMP: true, arm64asm.CCMN: true, arm64asm.FCMP: true, arm64asm.FCMPE: true,
	arm64asm.FCCMP: true, arm64asm.FCCMPE: true, arm64asm.MSR: true,
}
