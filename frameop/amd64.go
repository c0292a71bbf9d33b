// Package frameop classifies machine instructions by what a scan over
// raw code needs: their effect on the stack frame (for unwind recipes) and
// on control flow (for procedure bounds). The x86-64 decoding is in this
// file; it is not named *_amd64.go because binaries are analysed on any
// host.
package frameop

import (
	"golang.org/x/arch/x86/x86asm"

	"bloop/amd64asm"
)

// Kind classifies an instruction by its effect on the frame (the seven
// frame-relevant kinds of the paper, split finer) and on control flow.
type Kind uint8

const (
	None      Kind = iota // not frame-relevant
	SPAdd                 // SP += imm (push/pop/sub/add/lea on SP); imm = bytes released
	SPUnknown             // SP moves by an amount the scan cannot know (alloca, and-realign)
	SPFromBP              // SP = BP + imm (mov rsp,rbp; lea rsp,[rbp+d])
	BPFromSP              // BP = SP + imm (mov rbp,rsp; lea rbp,[rsp+d]): frame pointer set up
	BPWrite               // BP gets any other value
	PushBP                // push rbp: store the caller's FP
	PopBP                 // pop rbp: restore it
	StoreBP               // mov [rsp+imm],rbp
	LoadBP                // mov rbp,[rsp+imm]
	Leave                 // mov rsp,rbp; pop rbp
	Enter                 // push rbp; mov rbp,rsp; sub rsp,imm
	Call                  // call (target when direct)
	CondJump              // conditional jump to target
	Jump                  // unconditional direct jump to target
	JumpInd               // jump through a register or memory
	Ret
	Halt    // never falls through (hlt, ud2, int3)
	Invalid // undecodable byte
)

// Op is one decoded instruction as the scans see it. The small fields
// come first, so an Op packs into 48 bytes: procs keeps one per
// instruction of a stripped region (tens of millions in a large Go binary).
type Op struct {
	Kind   Kind
	Len    uint8 // at most 15
	Pad    bool  // padding between procedures (nop, int3)
	Endbr  bool  // endbr64: a likely procedure entry
	PushCS bool  // push of a callee-saved register (a prologue)
	SubSP  bool  // sub rsp,imm (a prologue, or a frame allocation)
	AddSP  bool  // add rsp,imm or lea rsp,[rsp+imm] (an epilogue)
	// Inherits marks a copy of rax or rbp to another register, and
	// operands based on rbp: code that starts with one uses a value it did
	// not compute, as a landing pad does (the exception in rax, the frame
	// in rbp), but no procedure entry (no argument comes in those
	// registers).
	Inherits bool
	Imm      int64
	Target   uint64 // direct jump/call target; 0 when indirect
	RipLea   uint64 // lea reg,[rip+d]: the address (a jump table's base)
	Table8   uint64 // jmp *table(,idx,8): the table of absolute targets
	CmpImm   int64  // cmp reg,imm: a jump table's bound (0 when not a compare)
}

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

// DecodeAMD64 classifies the instruction at addr. x86asm (from
// golang.org/x/arch) does the decoding; it returns endbr64 as a bare
// prefix, so that is recognized by its bytes first.
func DecodeAMD64(b []byte, addr uint64) Op {
	if len(b) >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && (b[3] == 0xfa || b[3] == 0xfb) {
		return Op{Kind: None, Len: 4, Endbr: true}
	}
	x, err := amd64asm.Decode(b)
	if len(b) >= 3 && b[0] == 0x0f && b[1] == 0x01 && b[2] >= 0xc0 {
		// 0f 01 /reg-form: xgetbv, rdpkru, wrpkru, xend, xtest, ...
		// (x86asm does not know all of them); none touches the frame.
		return Op{Len: 3}
	}
	if err != nil || x.Len == 0 {
		if n := vexLen(b); n > 0 {
			// A VEX instruction x86asm does not know (AMD's FMA4, ...):
			// vector code, never a frame change; its length keeps the scan
			// on instruction boundaries.
			return Op{Len: uint8(n)}
		}
		return Op{Kind: Invalid, Len: 1} // after an error Len cannot be trusted
	}
	op := Op{Len: uint8(x.Len)}
	a0, a1 := x.Args[0], x.Args[1]
	rel := func() uint64 {
		if r, ok := a0.(x86asm.Rel); ok {
			return uint64(int64(addr) + int64(x.Len) + int64(r))
		}
		return 0
	}
	switch x.Op {
	case x86asm.NOP:
		op.Pad = true
	case x86asm.INT:
		if len(b) > 0 && b[0] == 0xcc { // int3: padding; int $n returns
			op.Kind, op.Pad = Halt, true
		}
	case x86asm.HLT, x86asm.UD2, x86asm.UD1, x86asm.UD0:
		op.Kind = Halt
	case x86asm.XCHG:
		if a0 == x86asm.AX && a1 == x86asm.AX { // 66 90, a 2-byte nop
			op.Pad = true
		} else if isSP(a0) || isSP(a1) {
			op.Kind = SPUnknown
		} else if isBP(a0) || isBP(a1) {
			op.Kind = BPWrite
		}
	case x86asm.PUSH:
		if isBP(a0) && x.DataSize != 16 {
			op.Kind = PushBP
			break
		}
		op.Kind, op.Imm = SPAdd, -int64(pushSize(x))
		if r, ok := a0.(x86asm.Reg); ok && calleeSaved(r) {
			op.PushCS = true
		}
	case x86asm.PUSHFQ, x86asm.PUSHF:
		op.Kind, op.Imm = SPAdd, -int64(pushSize(x))
	case x86asm.POP:
		switch {
		case isBP(a0) && x.DataSize != 16:
			op.Kind = PopBP
		case isSP(a0):
			op.Kind = SPUnknown
		default:
			op.Kind, op.Imm = SPAdd, int64(pushSize(x))
		}
	case x86asm.POPFQ, x86asm.POPF:
		op.Kind, op.Imm = SPAdd, int64(pushSize(x))
	case x86asm.LEAVE:
		op.Kind = Leave
	case x86asm.ENTER:
		op.Kind = Enter
		if i, ok := a0.(x86asm.Imm); ok {
			op.Imm = int64(i)
		}
	case x86asm.CALL:
		op.Kind, op.Target = Call, rel()
	case x86asm.JMP:
		if t := rel(); t != 0 {
			op.Kind, op.Target = Jump, t
		} else {
			op.Kind = JumpInd
			if m, ok := a0.(x86asm.Mem); ok && m.Base == 0 && m.Index != 0 && m.Scale == 8 {
				op.Table8 = uint64(m.Disp)
			}
		}
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE,
		x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO,
		x86asm.JP, x86asm.JS, x86asm.JCXZ, x86asm.JECXZ, x86asm.JRCXZ,
		x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		op.Kind, op.Target = CondJump, rel()
	case x86asm.RET, x86asm.LRET, x86asm.IRETQ:
		op.Kind = Ret
	default:
		if i, ok := a1.(x86asm.Imm); ok && x.Op == x86asm.CMP && i > 0 {
			if _, ok := a0.(x86asm.Reg); ok {
				op.CmpImm = int64(i)
			}
		}
		op.Inherits = inherits(x)
		if m, ok := a1.(x86asm.Mem); ok && x.Op == x86asm.LEA && m.Base == x86asm.RIP {
			op.RipLea = uint64(int64(addr) + int64(x.Len) + m.Disp)
		}
		op.Kind, op.Imm = classifyWrite(x)
		if op.Kind == SPAdd && x.Op != x86asm.POP && x.Op != x86asm.PUSH {
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

// vexLen returns the length of a VEX-encoded instruction (c4/c5 prefix),
// or 0: prefix, opcode, ModRM with SIB and displacement, and the imm8 of
// map 0F3A (and of the few map-0F opcodes that take one).
func vexLen(b []byte) int {
	if len(b) < 3 {
		return 0
	}
	var n, mmap int
	switch b[0] {
	case 0xc5:
		n, mmap = 2, 1
	case 0xc4:
		n, mmap = 3, int(b[1]&0x1f)
		if mmap < 1 || mmap > 3 {
			return 0
		}
	default:
		return 0
	}
	if len(b) < n+2 {
		return 0
	}
	opcode := b[n]
	n++
	if mmap == 1 && opcode == 0x77 { // vzeroupper, vzeroall: no ModRM
		return n
	}
	modrm := b[n]
	n++
	mod, rm := modrm>>6, modrm&7
	if mod != 3 && rm == 4 {
		if len(b) <= n {
			return 0
		}
		if mod == 0 && b[n]&7 == 5 {
			n += 4
		}
		n++
	}
	switch {
	case mod == 0 && rm == 5:
		n += 4
	case mod == 1:
		n++
	case mod == 2:
		n += 4
	}
	if mmap == 3 || mmap == 1 && (opcode >= 0x70 && opcode <= 0x73 || opcode == 0xc2 || opcode >= 0xc4 && opcode <= 0xc6) {
		n++
	}
	if n > len(b) {
		return 0
	}
	return n
}

// classifyWrite handles ordinary instructions that write SP or BP.
func classifyWrite(x x86asm.Inst) (Kind, int64) {
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
