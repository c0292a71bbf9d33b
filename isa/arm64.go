package isa

// AArch64: control-flow kinds and PLT stubs. Every instruction is one
// little-endian 32-bit word, so decoding never loses its footing; the
// branch encodings are few and fixed, and are classified from their bits
// here. golang.org/x/arch's arm64asm decodes the operands of the
// instructions jump tables are built from (arm64_jumptable.go): it does
// not know every instruction compiled code holds (the LSE atomics libgcc's
// __aarch64_cas8_relax is made of, SVE), and an instruction it cannot read
// must not end a procedure's code.

import "encoding/binary"

type arm64 struct{}

func (arm64) Name() string { return "arm64" }
func (arm64) MaxLen() int  { return 4 }
func (arm64) Align() int   { return 4 }

// Decode classifies the instruction at addr.
func (arm64) Decode(b []byte, addr uint64) Inst {
	if len(b) < 4 {
		return Inst{Addr: addr, Len: 4, Kind: Invalid}
	}
	k, t := flowARM64(binary.LittleEndian.Uint32(b), addr)
	return Inst{Addr: addr, Len: 4, Kind: k, Target: t}
}

// flowARM64 is the control-flow kind of instruction word w at addr and
// its direct target (Arm ARM, C4.1.65 "Branches, Exception Generating and
// System instructions", and C4.1.1 for udf).
func flowARM64(w uint32, addr uint64) (Kind, uint64) {
	// rel is the word offset in bits [lo, lo+n) of w, as an address.
	rel := func(lo, n uint) uint64 {
		off := int64(int32(w>>lo<<(32-n)) >> (32 - n))
		return uint64(int64(addr) + off*4)
	}
	switch {
	case w&0x7c000000 == 0x14000000: // b, bl: imm26
		if w>>31 == 1 {
			return Call, rel(0, 26)
		}
		return Jump, rel(0, 26)
	case w&0xff000000 == 0x54000000: // b.cond, bc.cond: imm19
		if w&0xf >= 0xe && w&0x10 == 0 {
			return Jump, rel(5, 19) // b.al, b.nv: always taken
		}
		return CondJump, rel(5, 19)
	case w&0x7e000000 == 0x34000000: // cbz, cbnz: imm19
		return CondJump, rel(5, 19)
	case w&0x7e000000 == 0x36000000: // tbz, tbnz: imm14
		return CondJump, rel(5, 14)
	case w&0xfe1f0000 == 0xd61f0000: // unconditional branch (register)
		return branchRegister(w), 0
	case w&0xffe0001f == 0xd4200000, w&0xffe0001f == 0xd4400000: // brk, hlt
		return Halt, 0
	case w&0xffff0000 == 0: // udf #imm16
		return Halt, 0
	}
	return Other, 0
}

// branchRegister classifies the unconditional branches to a register:
// br, blr, ret and their pointer-authenticating forms (braa, blraaz,
// retaa, ...), and the exception returns.
func branchRegister(w uint32) Kind {
	opc, op3, rn, op4 := (w>>21)&0xf, (w>>10)&0x3f, (w>>5)&0x1f, w&0x1f
	plain := op3 == 0 && op4 == 0
	auth := (op3 == 2 || op3 == 3) // key A or B
	switch opc {
	case 0: // br, braaz, brabz
		if plain || auth && op4 == 0x1f {
			return IndirectJump
		}
	case 1: // blr, blraaz, blrabz
		if plain || auth && op4 == 0x1f {
			return IndirectCall
		}
	case 2: // ret, retaa, retab
		if plain || auth && rn == 0x1f && op4 == 0x1f {
			return Return
		}
	case 4, 5: // eret, eretaa, eretab, drps
		if rn == 0x1f && (plain || auth && op4 == 0x1f) {
			return Return
		}
	case 8: // braa, brab (modifier in op4)
		if auth {
			return IndirectJump
		}
	case 9: // blraa, blrab
		if auth {
			return IndirectCall
		}
	}
	return Other
}

// PLTSlot reads the GOT slot of an AArch64 PLT entry:
//
//	adrp x16, page ; ldr x17, [x16, #off] ; add x16, x16, #off ; br x17
//
// (possibly after a bti c, in binaries built for branch protection).
func (arm64) PLTSlot(b []byte, addr uint64) (uint64, bool) {
	for i := 0; i+8 <= len(b) && i <= 4; i += 4 {
		adrp := binary.LittleEndian.Uint32(b[i:])
		ldr := binary.LittleEndian.Uint32(b[i+4:])
		page, ok := adrpPage(adrp, addr+uint64(i))
		// ldr x17, [x16, #imm12*8]: 64-bit load, unsigned offset.
		if !ok || adrp&0x1f != 16 || ldr&0xffc003ff != 0xf9400000|16<<5|17 {
			continue
		}
		return page + uint64((ldr>>10)&0xfff)*8, true
	}
	return 0, false
}

// adrpPage is the address `adrp` word w at addr puts in its register.
func adrpPage(w uint32, addr uint64) (uint64, bool) {
	if w&0x9f000000 != 0x90000000 {
		return 0, false
	}
	imm := int64(int32(((w>>5)&0x7ffff)<<2|(w>>29)&3) << 11 >> 11) // 21 bits, signed
	return uint64(int64(addr&^0xfff) + imm<<12), true
}
