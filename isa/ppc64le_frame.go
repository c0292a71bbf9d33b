package isa

// ppc64le frame operations (ELFv2 ABI), for the unwinder's recipes and
// the inference of procedure bounds. A call leaves the return address in
// LR; a procedure that calls others copies it to r0 (mflr r0) and stores
// it in its caller's frame (std r0,16(r1)), allocates its own frame with
// stdu r1,-N(r1), which also stores the back chain (the caller's r1) at
// 0(r1), and releases it with addi r1,r1,N or ld r1,0(r1). r31 is the
// frame pointer where one is needed (mr r31,r1 after alloca). A global
// entry starts with the TOC setup addis r2,r12,hi; addi r2,r2,lo, which
// calls from the same module skip (the local entry).

import (
	"strings"

	"golang.org/x/arch/ppc64/ppc64asm"
)

const (
	wordNop       = 0x60000000 // ori r0,r0,0
	wordGroupNop  = 0x60420000 // ori r2,r2,0: padding before an aligned entry
	wordMflr0     = 0x7c0802a6 // mflr r0 (rN: N in bits 21-25)
	wordMtlr0     = 0x7c0803a6 // mtlr r0
	wordTOCSetHi  = 0x3c4c0000 // addis r2,r12,hi (high half of the word)
	wordTOCSetLo  = 0x38420000 // addi r2,r2,lo
	maskImmediate = 0xffff0000
)

// ClearFP: the outermost frame is marked by a null back chain, not by an
// instruction.
func (ppc64le) ClearFP() []byte { return nil }

// ABI: the return address in LR; r31 is a frame pointer without a frame
// record, which .eh_frame follows once set up (gcc -O0, and alloca).
func (ppc64le) ABI() FrameABI {
	return FrameABI{LinkRegister: true, SPRestoreEndsFP: true, BackChain: true}
}

// Frame classifies the instruction at addr by its effect on the frame.
// The copy of LR (mflr rN) may be in any register (r0 in compiled code,
// r9 around glibc's scv system calls, which clobber LR): Reg names it in
// the LR moves and slot operations, and names the register any other
// instruction writes.
func (p ppc64le) Frame(b []byte, addr uint64) FrameOp {
	x, ok := decodePPC(b)
	if !ok {
		// Zero words, traceback tables and other data between procedures:
		// never run, so padding to the scans.
		return FrameOp{Flow: Invalid, Len: 4, Pad: true}
	}
	op := FrameOp{Len: uint8(x.Len)}
	if x.Len == 4 {
		op.Flow, op.Target = flowPPC(x.Enc, addr)
	}
	w := x.Enc
	switch {
	case w == wordNop || w == wordGroupNop:
		op.Pad = true
		return op
	case w&maskImmediate == wordTOCSetHi:
		op.Endbr = true // a global entry's first instruction
		return op
	case w&^(31<<21) == wordMflr0:
		op.LR, op.Reg = LRToCopy, uint8(w>>21&31)+1
		op.PushCS = w == wordMflr0 // a prologue's
		return op
	case w&^(31<<21) == wordMtlr0:
		op.LR, op.Reg = LRFromCopy, uint8(w>>21&31)+1
		return op
	case x.Op == ppc64asm.SCV:
		op.LR = LRClobber // the vectored system call returns through LR
		return op
	}
	if op.Flow == Other && x.Len == 4 && (w>>26 == 18 || w>>26 == 16) && w&1 == 1 {
		op.LR = LRClobber // bl .+4, bcl 20,31,.+4: the pc read into LR
		return op
	}
	if op.Flow != Other {
		return op
	}
	ppcFrame(x, &op)
	op.SubSP = op.Frame == SPAdd && op.Imm < 0
	op.AddSP = op.Frame == SPAdd && op.Imm > 0
	return op
}

// offArg and immArg read an operand of the type the instruction's form
// has (0 for another, which no decoded instruction gives).
func offArg(a ppc64asm.Arg) int64 {
	o, _ := a.(ppc64asm.Offset)
	return int64(o)
}

func immArg(a ppc64asm.Arg) int64 {
	i, _ := a.(ppc64asm.Imm)
	return int64(i)
}

// gpr is register r's number plus 1, as FrameOp.Reg holds it.
func gpr(r ppc64asm.Reg) uint8 { return uint8(r-ppc64asm.R0) + 1 }

// ppcFrame classifies the instructions that are not branches.
func ppcFrame(x ppc64asm.Inst, op *FrameOp) {
	name := x.Op.String()
	a0, _ := x.Args[0].(ppc64asm.Reg)
	a1, _ := x.Args[1].(ppc64asm.Reg)
	switch x.Op {
	case ppc64asm.STDU:
		if a0 == ppc64asm.R1 && isReg(x.Args[2], ppc64asm.R1) {
			op.Frame, op.Imm = SPAdd, offArg(x.Args[1])
			return
		}
	case ppc64asm.STD:
		if isReg(x.Args[2], ppc64asm.R1) {
			off := offArg(x.Args[1])
			if a0 == ppc64asm.R31 {
				op.BPSlot, op.BPOff = SlotStore, int16(off)
			} else if a0 != ppc64asm.R1 {
				// A store of the register holding LR's copy, if it does.
				op.RASlot, op.RAOff, op.Reg = SlotStoreCopy, int16(off), gpr(a0)
			}
			// Callee-saved registers go below SP only in a prologue.
			op.PushCS = off < 0 && a0 >= ppc64asm.R14 && a0 <= ppc64asm.R31
		}
		return
	case ppc64asm.LD:
		if isReg(x.Args[2], ppc64asm.R1) {
			off := offArg(x.Args[1])
			switch a0 {
			case ppc64asm.R31:
				op.BPSlot, op.BPOff = SlotLoad, int16(off)
				return
			case ppc64asm.R1:
				if off == 0 {
					op.Frame = SPFromChain
					return
				}
			case ppc64asm.R2:
				op.TOCRestore = off == 24
				return
			default:
				op.RASlot, op.RAOff, op.Reg = SlotLoadCopy, int16(off), gpr(a0)
				return
			}
		}
	case ppc64asm.ADDI:
		imm := immArg(x.Args[2])
		switch {
		case a0 == ppc64asm.R1 && a1 == ppc64asm.R1:
			op.Frame, op.Imm = SPAdd, imm
			return
		case a0 == ppc64asm.R1 && a1 == ppc64asm.R31:
			op.Frame, op.Imm = SPFromBP, imm
			return
		case a0 == ppc64asm.R31 && a1 == ppc64asm.R1:
			op.Frame, op.Imm = BPFromSP, imm
			return
		}
	case ppc64asm.LI, ppc64asm.LIS:
		if a0 != ppc64asm.R1 && a0 != ppc64asm.R31 {
			imm := immArg(x.Args[1])
			if x.Op == ppc64asm.LIS {
				imm <<= 16
			}
			op.Frame, op.Reg, op.Imm = ConstSet, gpr(a0), imm
			return
		}
	case ppc64asm.ORI, ppc64asm.ORIS:
		if a0 == a1 && x.Args[2] == ppc64asm.Imm(0) {
			op.Pad = true // ori r1,r1,0 and the like: hints, no-ops
			return
		}
		if a0 == a1 && a0 != ppc64asm.R1 && a0 != ppc64asm.R31 {
			imm := immArg(x.Args[2]) & 0xffff
			if x.Op == ppc64asm.ORIS {
				imm <<= 16
			}
			op.Frame, op.Reg, op.Imm = ConstOr, gpr(a0), imm
			return
		}
	case ppc64asm.STDUX:
		if a0 == ppc64asm.R1 && a1 == ppc64asm.R1 {
			if rb, ok := x.Args[2].(ppc64asm.Reg); ok {
				op.Frame, op.Reg, op.Imm = SPAddReg, gpr(rb), 1
				return
			}
		}
	case ppc64asm.OR:
		if a1 == ppc64asm.R1 && isReg(x.Args[2], ppc64asm.R1) && a0 == ppc64asm.R31 {
			op.Frame = BPFromSP // mr r31,r1
			return
		}
		if a0 == ppc64asm.R1 && a1 == ppc64asm.R31 && isReg(x.Args[2], ppc64asm.R31) {
			op.Frame = SPFromBP // mr r1,r31
			return
		}
	case ppc64asm.CMPWI, ppc64asm.CMPDI, ppc64asm.CMPLWI, ppc64asm.CMPLDI:
		if i, ok := x.Args[2].(ppc64asm.Imm); ok && i > 0 {
			op.CmpImm = int64(i)
		}
		return
	}
	ws, n := ppcWrites(x, name)
	for _, r := range ws[:n] {
		switch r {
		case ppc64asm.R1:
			op.Frame = SPUnknown // stdux r1,r1,rN (alloca), or any other
		case ppc64asm.R31:
			if op.Frame == None {
				op.Frame = BPWrite
			}
		default:
			if op.Reg == 0 && r >= ppc64asm.R0 && r <= ppc64asm.R31 {
				op.Reg = gpr(r) // a write: it ends a copy of LR there
			}
		}
	}
	if name == "mtspr" && x.Args[0] == ppc64asm.SpReg(8) {
		op.LR = LRClobber // mtlr from a register no scan follows
	}
}

// ppcWrites lists the general registers x may write, the first n of out:
// the first operand of everything but stores, compares, traps and moves to
// special registers, and the base register of the update forms. (An array,
// not a slice: Frame runs on every instruction of a sweep.)
func ppcWrites(x ppc64asm.Inst, name string) (out [2]ppc64asm.Reg, n int) {
	store := strings.HasPrefix(name, "st")
	if r, ok := x.Args[0].(ppc64asm.Reg); ok && !store && !strings.HasPrefix(name, "cmp") &&
		!strings.HasPrefix(name, "mt") && !strings.HasPrefix(name, "t") && !strings.HasPrefix(name, "dcb") && !strings.HasPrefix(name, "icb") {
		out[n], n = r, n+1
	}
	if (store || strings.HasPrefix(name, "l")) && (strings.HasSuffix(name, "u") || strings.HasSuffix(name, "ux")) {
		for _, a := range x.Args[1:] {
			if r, ok := a.(ppc64asm.Reg); ok {
				out[n], n = r, n+1 // the updated base (stdu's, lwzux's)
				break
			}
		}
	}
	return out, n
}

// GlobalEntry returns the global entry of the procedure a call to target
// enters: ELFv2 calls from the same module skip the TOC setup (addis
// r2,r12,hi; addi r2,r2,lo) at the procedure's start, its local entry.
func (ppc64le) GlobalEntry(mem Memory, target uint64) uint64 {
	if target < 8 {
		return target
	}
	b := mem.Bytes(target-8, target)
	if len(b) == 8 && le32(b)&maskImmediate == wordTOCSetHi && le32(b[4:])&maskImmediate == wordTOCSetLo {
		return target - 8
	}
	return target
}

// LinkerStub recognizes the ELFv2 linker's lazy-binding resolver by its
// start, mflr r0; bcl 20,31,.+4; mflr r11 (it reads its own address), and
// the branch to it of each PLT slot's lazy entry, which follow it.
func (ppc64le) LinkerStub(mem Memory, addr uint64) bool {
	b := mem.Bytes(addr, addr+12)
	if len(b) >= 4 {
		if k, t := flowPPC(le32(b), addr); k == Jump && t < addr {
			b = mem.Bytes(t, t+12)
		}
	}
	return len(b) >= 12 && le32(b) == wordMflr0 && le32(b[4:]) == 0x429f0005 && le32(b[8:]) == 0x7d6802a6
}

// GlinkResolver reads the branch to the resolver in the first lazy PLT
// entry, DT_PPC64_GLINK + 32: its first or second word (binutils' entries
// may load r0 first, in ELFv1).
func (ppc64le) GlinkResolver(mem Memory, dynGlink uint64) (lo, hi uint64, ok bool) {
	stub := dynGlink + 32
	for off := uint64(0); off <= 4; off += 4 {
		b := mem.Bytes(stub+off, stub+off+4)
		if len(b) < 4 {
			return 0, 0, false
		}
		if k, t := flowPPC(le32(b), stub+off); k == Jump && t < stub && stub-t <= 256 {
			return t, stub, true
		}
	}
	return 0, 0, false
}
