package isa

import "golang.org/x/arch/x86/x86asm"

// tailMark classifies the instruction at the start of b as Dyninst 12.3's
// x86-64 parser reads the one before a jump: after the end of a frame, a
// jump is a tail call (Dyninst12.TailMark).
func (amd64) tailMark(b []byte, addr uint64) TailMark {
	x, _, ok := decodeAMD64(b)
	if !ok || x.Op == 0 {
		return NoTailMark
	}
	a0, a1 := x.Args[0], x.Args[1]
	switch x.Op {
	case x86asm.NOP:
		return NopMark
	case x86asm.XCHG:
		if a0 == x86asm.AX && a1 == x86asm.AX { // 66 90
			return NopMark
		}
	case x86asm.LEA:
		// lea %rsi,(%rsi) and lea 0x0(%rsi,%riz,1),%rsi: padding
		// (Dyninst simplifies the address and compares the registers).
		if r, ok := a0.(x86asm.Reg); ok {
			if m, ok := a1.(x86asm.Mem); ok && m.Base == r && m.Index == 0 && m.Disp == 0 && m.Segment == 0 {
				return NopMark
			}
		}
	case x86asm.LEAVE:
		return EpilogueMark
	case x86asm.POP:
		// A register the ABI preserves across calls.
		if r, ok := a0.(x86asm.Reg); ok && (calleeSaved(r) || r == x86asm.RBP) {
			return EpilogueMark
		}
	case x86asm.ADD:
		if isSP(a0) {
			return FreeMark
		}
	}
	return NoTailMark
}
