package unwind

// The x86-64 parts of the unwinder: instruction decoding into the
// frame-relevant kinds the scans use, and jump-table shapes. (The file is
// not named *_amd64.go: binaries are analysed on any host.)

import (
	"encoding/binary"

	"golang.org/x/arch/x86/x86asm"

	"bloop/loader"
)

// opKind classifies an instruction by its effect on the frame (the seven
// frame-relevant kinds of the paper, split finer) and on control flow.
type opKind uint8

const (
	opNone      opKind = iota // not frame-relevant
	opSPAdd                   // SP += imm (push/pop/sub/add/lea on SP); imm = bytes released
	opSPUnknown               // SP moves by an amount the scan cannot know (alloca, and-realign)
	opSPFromBP                // SP = BP + imm (mov rsp,rbp; lea rsp,[rbp+d])
	opBPFromSP                // BP = SP + imm (mov rbp,rsp; lea rbp,[rsp+d]): frame pointer set up
	opBPWrite                 // BP gets any other value
	opPushBP                  // push rbp: store the caller's FP
	opPopBP                   // pop rbp: restore it
	opStoreBP                 // mov [rsp+imm],rbp
	opLoadBP                  // mov rbp,[rsp+imm]
	opLeave                   // mov rsp,rbp; pop rbp
	opEnter                   // push rbp; mov rbp,rsp; sub rsp,imm
	opCall                    // call (target when direct)
	opCondJump                // conditional jump to target
	opJump                    // unconditional direct jump to target
	opJumpInd                 // jump through a register or memory
	opRet
	opHalt    // never falls through (hlt, ud2, int3)
	opInvalid // undecodable byte
)

// frameOp is one decoded instruction as the scans see it.
type frameOp struct {
	kind   opKind
	len    int
	imm    int64
	target uint64 // direct jump/call target; 0 when indirect
	pad    bool   // padding between procedures (nop, int3)
	endbr  bool   // endbr64: a likely procedure entry
	pushCS bool   // push of a callee-saved register (a prologue)
	subSP  bool   // sub rsp,imm (a prologue, or a frame allocation)
	addSP  bool   // add rsp,imm or lea rsp,[rsp+imm] (an epilogue)
	ripLea uint64 // lea reg,[rip+d]: the address (a jump table's base)
	table8 uint64 // jmp *table(,idx,8): the table of absolute targets
	cmpImm int64  // cmp reg,imm: a jump table's bound (0 when not a compare)
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

// decodeAMD64 classifies the instruction at addr. x86asm (from
// golang.org/x/arch) does the decoding; it returns endbr64 as a bare
// prefix, so that is recognized by its bytes first.
func decodeAMD64(b []byte, addr uint64) frameOp {
	if len(b) >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && (b[3] == 0xfa || b[3] == 0xfb) {
		return frameOp{kind: opNone, len: 4, endbr: true}
	}
	x, err := x86asm.Decode(b, 64)
	if len(b) >= 3 && b[0] == 0x0f && b[1] == 0x01 && b[2] >= 0xc0 {
		// 0f 01 /reg-form: xgetbv, rdpkru, wrpkru, xend, xtest, ...
		// (x86asm does not know all of them); none touches the frame.
		return frameOp{len: 3}
	}
	if err != nil || x.Len == 0 {
		if n := vexLen(b); n > 0 {
			// A VEX instruction x86asm does not know (AMD's FMA4, ...):
			// vector code, never a frame change; its length keeps the scan
			// on instruction boundaries.
			return frameOp{len: n}
		}
		return frameOp{kind: opInvalid, len: 1} // after an error Len cannot be trusted
	}
	if x.Op == x86asm.VZEROUPPER || x.Op == x86asm.VZEROALL {
		x.Len = 3 // x86asm miscounts the 2-byte VEX form (c5 f8 77) as 4 bytes
		if b[0] == 0xc4 {
			x.Len = 4
		}
	}
	op := frameOp{len: x.Len}
	a0, a1 := x.Args[0], x.Args[1]
	rel := func() uint64 {
		if r, ok := a0.(x86asm.Rel); ok {
			return uint64(int64(addr) + int64(x.Len) + int64(r))
		}
		return 0
	}
	switch x.Op {
	case x86asm.NOP:
		op.pad = true
	case x86asm.INT:
		if len(b) > 0 && b[0] == 0xcc { // int3: padding; int $n returns
			op.kind, op.pad = opHalt, true
		}
	case x86asm.HLT, x86asm.UD2, x86asm.UD1, x86asm.UD0:
		op.kind = opHalt
	case x86asm.XCHG:
		if a0 == x86asm.AX && a1 == x86asm.AX { // 66 90, a 2-byte nop
			op.pad = true
		} else if isSP(a0) || isSP(a1) {
			op.kind = opSPUnknown
		} else if isBP(a0) || isBP(a1) {
			op.kind = opBPWrite
		}
	case x86asm.PUSH:
		if isBP(a0) && x.DataSize != 16 {
			op.kind = opPushBP
			break
		}
		op.kind, op.imm = opSPAdd, -int64(pushSize(x))
		if r, ok := a0.(x86asm.Reg); ok && calleeSaved(r) {
			op.pushCS = true
		}
	case x86asm.PUSHFQ, x86asm.PUSHF:
		op.kind, op.imm = opSPAdd, -int64(pushSize(x))
	case x86asm.POP:
		switch {
		case isBP(a0) && x.DataSize != 16:
			op.kind = opPopBP
		case isSP(a0):
			op.kind = opSPUnknown
		default:
			op.kind, op.imm = opSPAdd, int64(pushSize(x))
		}
	case x86asm.POPFQ, x86asm.POPF:
		op.kind, op.imm = opSPAdd, int64(pushSize(x))
	case x86asm.LEAVE:
		op.kind = opLeave
	case x86asm.ENTER:
		op.kind = opEnter
		if i, ok := a0.(x86asm.Imm); ok {
			op.imm = int64(i)
		}
	case x86asm.CALL:
		op.kind, op.target = opCall, rel()
	case x86asm.JMP:
		if t := rel(); t != 0 {
			op.kind, op.target = opJump, t
		} else {
			op.kind = opJumpInd
			if m, ok := a0.(x86asm.Mem); ok && m.Base == 0 && m.Index != 0 && m.Scale == 8 {
				op.table8 = uint64(m.Disp)
			}
		}
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE,
		x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO,
		x86asm.JP, x86asm.JS, x86asm.JCXZ, x86asm.JECXZ, x86asm.JRCXZ,
		x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		op.kind, op.target = opCondJump, rel()
	case x86asm.RET, x86asm.LRET, x86asm.IRETQ:
		op.kind = opRet
	default:
		if i, ok := a1.(x86asm.Imm); ok && x.Op == x86asm.CMP && i > 0 {
			if _, ok := a0.(x86asm.Reg); ok {
				op.cmpImm = int64(i)
			}
		}
		if m, ok := a1.(x86asm.Mem); ok && x.Op == x86asm.LEA && m.Base == x86asm.RIP {
			op.ripLea = uint64(int64(addr) + int64(x.Len) + m.Disp)
		}
		op.kind, op.imm = classifyWrite(x)
		if op.kind == opSPAdd && x.Op != x86asm.POP && x.Op != x86asm.PUSH {
			op.subSP, op.addSP = op.imm < 0, op.imm > 0
		}
	}
	return op
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
func classifyWrite(x x86asm.Inst) (opKind, int64) {
	a0, a1 := x.Args[0], x.Args[1]
	if m, ok := a0.(x86asm.Mem); ok {
		// mov [rsp+d],rbp stores the caller's FP in a frame without push.
		if x.Op == x86asm.MOV && m.Base == x86asm.RSP && m.Index == 0 && a1 == x86asm.RBP {
			return opStoreBP, m.Disp
		}
		return opNone, 0
	}
	if readsOnly[x.Op] {
		return opNone, 0
	}
	switch {
	case isSP(a0):
		switch x.Op {
		case x86asm.SUB, x86asm.ADD:
			if i, ok := a1.(x86asm.Imm); ok && a0 == x86asm.RSP {
				if x.Op == x86asm.SUB {
					return opSPAdd, -int64(i)
				}
				return opSPAdd, int64(i)
			}
		case x86asm.LEA:
			if m, ok := a1.(x86asm.Mem); ok && m.Index == 0 && a0 == x86asm.RSP {
				switch m.Base {
				case x86asm.RSP:
					return opSPAdd, m.Disp
				case x86asm.RBP:
					return opSPFromBP, m.Disp
				}
			}
		case x86asm.MOV:
			if a1 == x86asm.RBP {
				return opSPFromBP, 0
			}
		}
		return opSPUnknown, 0
	case isBP(a0):
		switch x.Op {
		case x86asm.MOV:
			if a1 == x86asm.RSP {
				return opBPFromSP, 0
			}
			if m, ok := a1.(x86asm.Mem); ok && m.Base == x86asm.RSP && m.Index == 0 && a0 == x86asm.RBP {
				return opLoadBP, m.Disp
			}
		case x86asm.LEA:
			if m, ok := a1.(x86asm.Mem); ok && m.Base == x86asm.RSP && m.Index == 0 && a0 == x86asm.RBP {
				return opBPFromSP, m.Disp
			}
		}
		return opBPWrite, 0
	}
	return opNone, 0
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

// tableTargets resolves the jump table of the indirect jump insts[i], in
// the two shapes gcc and clang emit: absolute entries (jmp *T(,idx,8)) and,
// in position-independent code, 4-byte offsets from the table's address
// loaded by a nearby lea T(%rip).
func tableTargets(img *loader.Image, insts []decoded, i int, r loader.Range) []uint64 {
	// The table's size comes from the range check before the jump
	// (cmp idx,N; ja default); without one the table is left alone.
	n := uint64(0)
	for j := i - 1; j >= 0 && j >= i-12; j-- {
		if c := insts[j].op.cmpImm; c > 0 && c < 4096 && j+1 < i && insts[j+1].op.kind == opCondJump {
			n = uint64(c) + 1
			break
		}
	}
	if n == 0 {
		return nil
	}
	in := func(t uint64) bool { return r.Lo <= t && t < r.Hi }
	var out []uint64
	if t8 := insts[i].op.table8; t8 != 0 {
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
		base := insts[j].op.ripLea
		if base == 0 {
			continue
		}
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
	return nil
}
