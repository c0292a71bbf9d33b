package isa

// AArch64 jump tables.

import (
	"encoding/binary"
	"strings"

	"golang.org/x/arch/arm64/arm64asm"
)

// a64 is one instruction of a path, as arm64asm reads it.
type a64 struct {
	arm64asm.Inst
	addr uint64
}

// JumpTable resolves the jump-table idioms of gcc and clang, which load
// an entry scaled by the index and add it, shifted, to a base address:
//
//	gcc:   adrp x1, T; add x1, x1, :lo12:T; ldrb w3, [x1, w0, uxtw]
//	       adr x1, L; add x3, x1, w3, sxtb #2; br x3         (ldrh: sxth; ldr w: sxtw)
//	clang: adrp x13, T; add x13, x13, :lo12:T; ...; adr x15, L
//	       ldrb w16, [x13, x14]; add x15, x15, x16, lsl #2; br x15   (ldrh, unsigned)
//	       ldrsw x9, [x8, x9, lsl #2]; add x9, x8, x9; br x9     (4-byte entries from T)
//	absolute: ldr x0, [x1, x0, lsl #3]; br x0
//
// The table's size comes from the `cmp wIdx, #n; b.hi` that bounds the
// index (arm64Bound), else entries are read while they point into the
// procedure.
//
// Dyninst 12.3 (to.Dyninst) resolves a table only when the compare bounds
// the index register itself, at the width the load reads it (arm64Bound's
// direct): clang's, whose compare reads another register holding the
// same value (main of ctrl-aarch64-clang14-O2) or the 32-bit half of the
// 64-bit index (interpret of switch-clang14-O2), it leaves unresolved,
// and hpcstruct puts the cases outside the loop; clang -O0's, compared
// with subs and kept on the stack, it resolves.
func (arm64) JumpTable(mem Memory, path []Inst, jmp Inst, to Targets) []uint64 {
	xs := decodePathARM64(mem, path)
	n := len(xs)
	if n == 0 || xs[n-1].Op != arm64asm.BR {
		return nil
	}
	target, ok := xs[n-1].Args[0].(arm64asm.Reg)
	if !ok {
		return nil
	}
	d := lastWrite(xs, n-1, regNum(target))
	if d < 0 {
		return nil
	}
	switch def := xs[d]; def.Op {
	case arm64asm.LDR:
		// Absolute 8-byte entries: ldr xT, [xTable, xIdx, lsl #3].
		m, ok := def.Args[1].(arm64asm.MemExtend)
		if !ok || !isX(target) || m.Amount != 3 {
			return nil
		}
		table, ok := constAddr(xs, d, regSPNum(m.Base))
		if !ok {
			return nil
		}
		e := tableEntry{table: table, size: 8}
		return e.read(mem, xs, d, m.Index, to)
	case arm64asm.ADD:
		return addedEntry(mem, xs, d, to)
	}
	return nil
}

// decodePathARM64 decodes path back from its end to the first
// instruction arm64asm cannot read.
func decodePathARM64(mem Memory, path []Inst) []a64 {
	start := len(path)
	for start > 0 {
		p := path[start-1]
		if _, err := arm64asm.Decode(mem.Bytes(p.Addr, p.Addr+4)); err != nil {
			break
		}
		start--
	}
	xs := make([]a64, 0, len(path)-start)
	for _, p := range path[start:] {
		x, _ := arm64asm.Decode(mem.Bytes(p.Addr, p.Addr+4))
		xs = append(xs, a64{x, p.Addr})
	}
	return xs
}

// addedEntry resolves `add xT, xBase, wEntry, <extend> #s` (xs[d]): the
// base is a constant address, the entry a load from a table indexed by a
// register.
func addedEntry(mem Memory, xs []a64, d int, to Targets) []uint64 {
	add := xs[d]
	// The base is Args[1]: a RegSP in the extended-register form, a Reg
	// in the shifted-register one.
	base, ok := constAddr(xs, d, argReg(add.Args[1]))
	if !ok {
		return nil
	}
	e := tableEntry{base: base}
	var entry arm64asm.Reg
	switch a := add.Args[2].(type) {
	case arm64asm.Reg: // add x9, x8, x9
		entry = a
	case arm64asm.RegExtshiftAmount:
		w := add.Enc
		if w&(1<<21) != 0 { // extended register: option in 15:13, amount in 12:10
			e.extend, e.shift = (w>>13)&7, uint((w>>10)&7)
			entry = arm64asm.Reg(arm64asm.W0) + arm64asm.Reg((w>>16)&0x1f)
		} else { // shifted register: only lsl makes a table
			if (w>>22)&3 != 0 {
				return nil
			}
			e.extend, e.shift = 3, uint((w>>10)&0x3f) // uxtx: the whole register
			entry = arm64asm.Reg(arm64asm.X0) + arm64asm.Reg((w>>16)&0x1f)
		}
	default:
		return nil
	}
	if add.Enc>>31 == 0 {
		return nil // a 32-bit add computes no address
	}
	l := lastWrite(xs, d, regNum(entry))
	if l < 0 {
		return nil
	}
	load := xs[l]
	m, ok := load.Args[1].(arm64asm.MemExtend)
	if !ok {
		return nil
	}
	switch load.Op {
	case arm64asm.LDRB:
		e.size = 1
	case arm64asm.LDRSB:
		e.size, e.signed = 1, true
	case arm64asm.LDRH:
		e.size = 2
	case arm64asm.LDRSH:
		e.size, e.signed = 2, true
	case arm64asm.LDRSW:
		e.size, e.signed = 4, true
	case arm64asm.LDR:
		if r, _ := load.Args[0].(arm64asm.Reg); isX(r) {
			return nil
		}
		e.size = 4
	default:
		return nil
	}
	// The index is scaled to the entry (a byte load's shift is 0 whatever
	// Amount says).
	if e.size > 1 && 1<<m.Amount != e.size {
		return nil
	}
	if e.table, ok = constAddr(xs, l, regSPNum(m.Base)); !ok {
		return nil
	}
	return e.read(mem, xs, l, m.Index, to)
}

// tableEntry says how an entry becomes a target: target = base +
// (extend(entry) << shift), or the entry itself when base is 0 and size 8.
type tableEntry struct {
	table  uint64
	size   int  // bytes per entry
	signed bool // the load sign-extends
	base   uint64
	extend uint32 // the add's extend option: 0-3 uxtb..uxtx, 4-7 sxtb..sxtx
	shift  uint
}

// value is entry k's target.
func (e tableEntry) value(b []byte) uint64 {
	var v uint64
	switch e.size {
	case 1:
		v = uint64(b[0])
		if e.signed {
			v = uint64(int64(int8(b[0])))
		}
	case 2:
		v = uint64(binary.LittleEndian.Uint16(b))
		if e.signed {
			v = uint64(int64(int16(v)))
		}
	case 4:
		v = uint64(binary.LittleEndian.Uint32(b))
		if e.signed {
			v = uint64(int64(int32(v)))
		}
	case 8:
		return binary.LittleEndian.Uint64(b)
	}
	bits := uint(8) << (e.extend & 3) // the add reads 8, 16, 32 or 64 bits
	if bits < 64 {
		v &= 1<<bits - 1
		if e.extend >= 4 && v&(1<<(bits-1)) != 0 {
			v |= ^uint64(0) << bits
		}
	}
	return e.base + v<<e.shift
}

// read reads the table that xs[load] indexes with register idx.
func (e tableEntry) read(mem Memory, xs []a64, load int, idx arm64asm.Reg, to Targets) []uint64 {
	bound, direct := arm64Bound(xs, load, regNum(idx), isX(idx), to.Dyninst)
	if to.Dyninst && !direct {
		return nil
	}
	return readEntries(mem, e.table, e.size, bound, e.value, to)
}

// constAddr is the address register r holds before xs[i] when an adr,
// an adrp with the adds of its low bits, or copies of those set it.
func constAddr(xs []a64, i int, r int) (uint64, bool) {
	var off uint64
	for depth := 0; depth < 8; depth++ {
		d := lastWrite(xs, i, r)
		if d < 0 {
			return 0, false
		}
		x := xs[d]
		switch x.Op {
		case arm64asm.ADR:
			rel, _ := x.Args[1].(arm64asm.PCRel)
			return x.addr + uint64(rel) + off, true
		case arm64asm.ADRP:
			page, ok := adrpPage(x.Enc, x.addr)
			return page + off, ok
		case arm64asm.ADD:
			src, ok := x.Args[1].(arm64asm.RegSP)
			if !ok || x.Enc&0x1f000000 != 0x11000000 { // add (immediate)
				return 0, false
			}
			off += addImm(x.Enc)
			r = regSPNum(src)
		case arm64asm.MOV:
			src, ok := x.Args[1].(arm64asm.Reg)
			if !ok {
				return 0, false
			}
			r = regNum(src)
		default:
			return 0, false
		}
		i = d
	}
	return 0, false
}

// addImm is the immediate of an add or sub (immediate): imm12, shifted
// left by 12 when sh is set (arm64asm does not export it).
func addImm(w uint32) uint64 {
	imm := uint64((w >> 10) & 0xfff)
	if w&(1<<22) != 0 {
		imm <<= 12
	}
	return imm
}

// Register numbers: 0-30 the general registers, 31 the zero register,
// 32 the stack pointer; -1 for the others (vector and floating point).
const (
	regZR = 31
	regSP = 32
)

func regNum(r arm64asm.Reg) int {
	switch {
	case r >= arm64asm.W0 && r <= arm64asm.WZR:
		return int(r - arm64asm.W0)
	case r >= arm64asm.X0 && r <= arm64asm.XZR:
		return int(r - arm64asm.X0)
	}
	return -1
}

func regSPNum(r arm64asm.RegSP) int {
	if n := regNum(arm64asm.Reg(r)); n != regZR {
		return n
	}
	return regSP
}

func isX(r arm64asm.Reg) bool { return r >= arm64asm.X0 && r <= arm64asm.XZR }

// Where lastWrite finds no instruction that writes a register.
const (
	noWrite   = -1 // the register holds what it held where the path starts
	clobbered = -2 // a call may have changed it, or it is not a general register
)

// lastWrite is the position of the last instruction before i that writes
// register r, or noWrite or clobbered.
func lastWrite(xs []a64, i int, r int) int {
	if r < 0 || r == regZR {
		return clobbered
	}
	for j := i - 1; j >= 0; j-- {
		x := xs[j]
		if x.Op == arm64asm.BL || x.Op == arm64asm.BLR {
			// The callee need not preserve x0-x18 and x30.
			if r <= 18 || r == 30 {
				return clobbered
			}
			continue
		}
		for _, w := range writes(x.Inst) {
			if w == r {
				return j
			}
		}
	}
	return noWrite
}

// writes lists the general registers x writes: its first operand, but
// for stores, compares and branches; both of a load pair's; and a base
// register written back.
func writes(x arm64asm.Inst) []int {
	var out []int
	for _, a := range x.Args {
		if m, ok := a.(arm64asm.MemImmediate); ok && (m.Mode == arm64asm.AddrPreIndex || m.Mode == arm64asm.AddrPostIndex || m.Mode == arm64asm.AddrPostReg) {
			out = append(out, regSPNum(m.Base))
		}
	}
	op := x.Op.String()
	switch {
	case noDest[x.Op]:
		return out
	case strings.HasPrefix(op, "ST"):
		// Stores write no register, but an exclusive store's status
		// (stxr, stlxrb, stxp, ...).
		if !strings.Contains(op, "XR") && !strings.Contains(op, "XP") {
			return out
		}
	case x.Op == arm64asm.LDP || x.Op == arm64asm.LDNP || x.Op == arm64asm.LDPSW || x.Op == arm64asm.LDXP || x.Op == arm64asm.LDAXP:
		out = append(out, argReg(x.Args[1]))
	}
	return append(out, argReg(x.Args[0]))
}

func argReg(a arm64asm.Arg) int {
	switch a := a.(type) {
	case arm64asm.Reg:
		return regNum(a)
	case arm64asm.RegSP:
		return regSPNum(a)
	}
	return -1
}

// noDest are the instructions whose first operand is not written.
var noDest = map[arm64asm.Op]bool{
	arm64asm.CMP: true, arm64asm.CMN: true, arm64asm.TST: true, arm64asm.CCMP: true, arm64asm.CCMN: true,
	arm64asm.FCMP: true, arm64asm.FCMPE: true, arm64asm.FCCMP: true, arm64asm.FCCMPE: true,
	arm64asm.B: true, arm64asm.BR: true, arm64asm.RET: true, arm64asm.CBZ: true, arm64asm.CBNZ: true,
	arm64asm.TBZ: true, arm64asm.TBNZ: true, arm64asm.PRFM: true, arm64asm.PRFUM: true, arm64asm.NOP: true,
	arm64asm.HINT: true, arm64asm.MSR: true, arm64asm.SYS: true, arm64asm.DC: true, arm64asm.IC: true,
	arm64asm.TLBI: true, arm64asm.AT: true, arm64asm.SVC: true, arm64asm.HVC: true, arm64asm.SMC: true,
	arm64asm.BRK: true, arm64asm.HLT: true, arm64asm.DMB: true, arm64asm.DSB: true, arm64asm.ISB: true,
	arm64asm.CLREX: true,
}
