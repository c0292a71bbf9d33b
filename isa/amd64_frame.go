package isa

// x86-64 frame operations, for the unwinder's recipes and the inference
// of procedure bounds.

import "golang.org/x/arch/x86/x86asm"

func isSP(a x86asm.Arg) bool { return a == x86asm.RSP || a == x86asm.ESP || a == x86asm.SP }
func isBP(a x86asm.Arg) bool {
	return a == x86asm.RBP || a == x86asm.EBP || a == x86asm.BP || a == x86asm.BPB
}

// readsOnly lists operations whose first operand is not written.
var readsOnly = map[x86asm.Op]bool{
	x86asm.CMP: true, x86asm.TEST: true, x86asm.PUSH: true, x86asm.BT: true,
	x86asm.UCOMISD: true, x86asm.UCOMISS: true, x86asm.COMISD: true, x86asm.COMISS: true,
	x86asm.PTEST: true, x86asm.PREFETCHT0: true, x86asm.PREFETCHNTA: true,
}

// The byte strings are shared, not made per call: the unwinder asks for
// them per frame. Callers only read them.
var (
	amd64ClearFP = []byte{0x31, 0xed}
	amd64Fill    = []byte{0xcc, 0x90}
)

// ClearFP is xor %ebp,%ebp.
func (amd64) ClearFP() []byte { return amd64ClearFP }

// ABI: the return address is pushed by the call; the lazy-binding
// trampoline runs with the relocation index pushed above it.
func (amd64) ABI() FrameABI {
	return FrameABI{EntryCFA: 8, PLT0CFA: 16, FrameRecord: true, Fill: amd64Fill}
}

// Frame classifies the instruction at addr by its effect on the frame
// and on control flow: the pre-decoder's reading where it has one, else
// the full decode's.
func (amd64) Frame(b []byte, addr uint64) FrameOp {
	if op, ok := preFrameAMD64(b, addr); ok {
		return op
	}
	return frameAMD64(b, addr)
}

// frameAMD64 is Frame by the full decode.
func frameAMD64(b []byte, addr uint64) FrameOp {
	x, n, ok := decodeAMD64(b)
	op := FrameOp{Len: uint8(n)}
	if !ok {
		op.Flow = Invalid
		return op
	}
	if x.Op == 0 {
		op.Endbr = isEndbr(b)
		return op
	}
	op.Flow, op.Target = flowAMD64(x, b, addr)
	a0, a1 := x.Args[0], x.Args[1]
	switch x.Op {
	case x86asm.NOP:
		op.Pad = true
	case x86asm.INT:
		op.Pad = op.Flow == Halt // int3
	case x86asm.XCHG:
		if a0 == x86asm.AX && a1 == x86asm.AX { // 66 90, a 2-byte nop
			op.Pad = true
		} else if isSP(a0) || isSP(a1) {
			op.Frame = SPUnknown
		} else if isBP(a0) || isBP(a1) {
			op.Frame = BPWrite
		}
	case x86asm.PUSH:
		if isBP(a0) && x.DataSize != 16 {
			op.Frame = PushBP
			break
		}
		op.Frame, op.Imm = SPAdd, -int64(pushSize(x))
		if r, ok := a0.(x86asm.Reg); ok && calleeSaved(r) {
			op.PushCS = true
		}
	case x86asm.PUSHFQ, x86asm.PUSHF:
		op.Frame, op.Imm = SPAdd, -int64(pushSize(x))
	case x86asm.POP:
		switch {
		case isBP(a0) && x.DataSize != 16:
			op.Frame = PopBP
		case isSP(a0):
			op.Frame = SPUnknown
		default:
			op.Frame, op.Imm = SPAdd, int64(pushSize(x))
			op.PopDI = a0 == x86asm.RDI
		}
	case x86asm.POPFQ, x86asm.POPF:
		op.Frame, op.Imm = SPAdd, int64(pushSize(x))
	case x86asm.LEAVE:
		op.Frame = Leave
	case x86asm.ENTER:
		op.Frame = Enter
		if i, ok := a0.(x86asm.Imm); ok {
			op.Imm = int64(i)
		}
	case x86asm.JMP:
		if m, ok := a0.(x86asm.Mem); ok && m.Base == 0 && m.Index != 0 && m.Scale == 8 {
			op.Table8 = uint64(m.Disp)
		}
	default:
		if op.Flow != Other {
			break
		}
		if i, ok := a1.(x86asm.Imm); ok && x.Op == x86asm.CMP && i > 0 {
			if _, ok := a0.(x86asm.Reg); ok {
				op.CmpImm = int64(i)
			}
		}
		op.Inherits = inherits(x)
		if m, ok := a1.(x86asm.Mem); ok && x.Op == x86asm.LEA && m.Base == x86asm.RIP {
			op.PCRel = uint64(int64(addr) + int64(x.Len) + m.Disp)
		}
		op.Frame, op.Imm = classifyWrite(x)
		if op.Frame == SPAdd {
			op.SubSP, op.AddSP = op.Imm < 0, op.Imm > 0
		}
	}
	return op
}

// inherits reports whether x copies rax or rbp to another register, or
// addresses memory relative to rbp.
func inherits(x x86asm.Inst) bool {
	if _, ok := x.Args[0].(x86asm.Reg); ok && x.Op == x86asm.MOV {
		switch x.Args[1] {
		case x86asm.RAX, x86asm.EAX, x86asm.RBP, x86asm.EBP:
			return true
		}
	}
	for _, a := range x.Args {
		if m, ok := a.(x86asm.Mem); ok && (m.Base == x86asm.RBP || m.Base == x86asm.EBP) {
			return true
		}
	}
	return false
}

// classifyWrite handles ordinary instructions that write SP or BP.
func classifyWrite(x x86asm.Inst) (FrameKind, int64) {
	a0, a1 := x.Args[0], x.Args[1]
	if m, ok := a0.(x86asm.Mem); ok {
		// mov [rsp+d],rbp stores the caller's FP in a frame without push.
		if x.Op == x86asm.MOV && m.Base == x86asm.RSP && m.Index == 0 && a1 == x86asm.RBP {
			return StoreBP, m.Disp
		}
		return None, 0
	}
	if readsOnly[x.Op] {
		return None, 0
	}
	switch {
	case isSP(a0):
		switch x.Op {
		case x86asm.SUB, x86asm.ADD:
			if i, ok := a1.(x86asm.Imm); ok && a0 == x86asm.RSP {
				if x.Op == x86asm.SUB {
					return SPAdd, -int64(i)
				}
				return SPAdd, int64(i)
			}
		case x86asm.LEA:
			if m, ok := a1.(x86asm.Mem); ok && m.Index == 0 && a0 == x86asm.RSP {
				switch m.Base {
				case x86asm.RSP:
					return SPAdd, m.Disp
				case x86asm.RBP:
					return SPFromBP, m.Disp
				}
			}
		case x86asm.MOV:
			if a1 == x86asm.RBP {
				return SPFromBP, 0
			}
		}
		return SPUnknown, 0
	case isBP(a0):
		switch x.Op {
		case x86asm.MOV:
			if a1 == x86asm.RSP {
				return BPFromSP, 0
			}
			if m, ok := a1.(x86asm.Mem); ok && m.Base == x86asm.RSP && m.Index == 0 && a0 == x86asm.RBP {
				return LoadBP, m.Disp
			}
		case x86asm.LEA:
			if m, ok := a1.(x86asm.Mem); ok && m.Base == x86asm.RSP && m.Index == 0 && a0 == x86asm.RBP {
				return BPFromSP, m.Disp
			}
		}
		return BPWrite, 0
	}
	return None, 0
}

func pushSize(x x86asm.Inst) int {
	if x.DataSize == 16 {
		return 2
	}
	return 8
}

func calleeSaved(r x86asm.Reg) bool {
	switch r {
	case x86asm.RBX, x86asm.R12, x86asm.R13, x86asm.R14, x86asm.R15:
		return true
	}
	return false
}
