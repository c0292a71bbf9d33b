package isa

// x86-64: decoding, control-flow kinds and PLT stubs. golang.org/x/arch's
// x86asm does the decoding; decodeAMD64 puts right, in one place, what it
// gets wrong or does not know.

import "golang.org/x/arch/x86/x86asm"

type amd64 struct{}

func (amd64) Name() string { return "amd64" }
func (amd64) MaxLen() int  { return 15 }
func (amd64) Align() int   { return 1 }

// decodeAMD64 decodes the instruction at the start of b. n is its length;
// ok is false when the bytes do not decode (n is then 1: after an error
// x86asm's length cannot be trusted). Instructions x86asm does not know
// come back as ok with x.Op == 0: none of them transfers control.
func decodeAMD64(b []byte) (x x86asm.Inst, n int, ok bool) {
	if isEndbr(b) {
		// x86asm decodes endbr64 as a bare prefix of length 1.
		return x86asm.Inst{}, 4, true
	}
	if len(b) >= 3 && b[0] == 0x0f && b[1] == 0x01 && b[2] >= 0xc0 {
		// 0f 01 /reg-form: xgetbv, rdpkru, wrpkru, xend, xtest, vmmcall, ...
		// (x86asm does not know all of them); each is 3 bytes.
		return x86asm.Inst{}, 3, true
	}
	x, err := x86asm.Decode(b, 64)
	if err == nil && (x.Op == x86asm.VZEROUPPER || x.Op == x86asm.VZEROALL) {
		// x86asm counts one byte too many for both VEX forms (c5 f8 77 is
		// 3 bytes, c4 e1 78 77 is 4): the instruction after it, often the
		// procedure's ret, disappeared into it.
		x.Len = 3
		if b[0] == 0xc4 {
			x.Len = 4
		}
	}
	// x86asm answers some forms it does not know with a bare prefix (no
	// opcode, length 1), as it does endbr64.
	if err != nil || x.Len == 0 || x.Op == 0 {
		if n := unknownToX86asm(b); n > 0 {
			return x86asm.Inst{}, n, true
		}
		if n := vexLen(b); n > 0 && (err != nil || x.Len == 0) {
			// A VEX instruction x86asm does not know (AMD's FMA4, ...):
			// vector code; its length keeps decoding on instruction boundaries.
			return x86asm.Inst{}, n, true
		}
		if err != nil || x.Len == 0 {
			return x86asm.Inst{}, 1, false
		}
	}
	return x, x.Len, true
}

func isEndbr(b []byte) bool {
	return len(b) >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && (b[3] == 0xfa || b[3] == 0xfb)
}

// unknownToX86asm returns the length of the instructions x86asm does not
// decode that compiled code contains, or 0. Each has no operand but a
// register and continues at the next instruction:
//
//	0f 01 /mod=11   vmcall, vmlaunch, vmresume, vmxoff, vmrun, vmmcall,
//	                vmload, vmsave, stgi, clgi, skinit, invlpga, enclu, ...
//	                (vmlinux's xen_hypercall_amd starts with vmmcall)
//	0f c7 /7 mod=11 rdseed (libstdc++'s __x86_rdseed)
//	66|f2|f3 0f ae /6 mod=11  tpause, umwait, umonitor (vmlinux's delay_halt_tpause)
func unknownToX86asm(b []byte) int {
	n, prefixed, ok := twoByteOpcode(b, isMandatoryPrefix)
	if !ok {
		return 0
	}
	op, modrm := b[n+1], b[n+2]
	switch {
	case op == 0x01 && modrm >= 0xc0:
	case op == 0xc7 && modrm>>6 == 3 && (modrm>>3)&7 == 7:
	case op == 0xae && prefixed && modrm>>6 == 3 && (modrm>>3)&7 == 6:
	default:
		return 0
	}
	return n + 3
}

// twoByteOpcode finds a legacy two-byte (0F) instruction with its ModRM
// at the start of b: up to 4 prefixes skip accepts, an optional REX, then
// 0F at n, its opcode at n+1 and ModRM at n+2; prefixed reports whether a
// prefix came first.
func twoByteOpcode(b []byte, skip func(byte) bool) (n int, prefixed, ok bool) {
	for n < len(b) && n < 4 && skip(b[n]) {
		n++
	}
	prefixed = n > 0
	if n < len(b) && b[n]&0xf0 == 0x40 { // REX
		n++
	}
	return n, prefixed, len(b) >= n+3 && b[n] == 0x0f
}

// isMandatoryPrefix reports whether c is one of the prefixes that select
// an SSE-era instruction (66, F2, F3).
func isMandatoryPrefix(c byte) bool { return c == 0x66 || c == 0xf2 || c == 0xf3 }

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
	if len(b) < n+1 {
		return 0
	}
	opcode := b[n]
	n++
	if mmap == 1 && opcode == 0x77 { // vzeroupper, vzeroall: no ModRM
		return n
	}
	if len(b) < n+1 {
		return 0
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

// Decode classifies the instruction at addr: as the pre-decoder reads
// it where it can (amd64_pre.go), else by the full decode.
func (amd64) Decode(b []byte, addr uint64) Inst {
	if op, ok := preFrameAMD64(b, addr); ok {
		return Inst{Addr: addr, Len: int(op.Len), Kind: op.Flow, Target: op.Target}
	}
	x, n, ok := decodeAMD64(b)
	if !ok {
		return Inst{Addr: addr, Len: n, Kind: Invalid}
	}
	k, t := flowAMD64(x, b, addr)
	return Inst{Addr: addr, Len: n, Kind: k, Target: t}
}

// flowAMD64 is the control-flow kind of x and its direct target.
func flowAMD64(x x86asm.Inst, b []byte, addr uint64) (Kind, uint64) {
	rel, isRel := x.Args[0].(x86asm.Rel)
	target := uint64(int64(addr) + int64(x.Len) + int64(rel))
	switch x.Op {
	case x86asm.JMP:
		if isRel {
			return Jump, target
		}
		return IndirectJump, 0
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE,
		x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO,
		x86asm.JP, x86asm.JS, x86asm.JCXZ, x86asm.JECXZ, x86asm.JRCXZ,
		x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		if isRel {
			return CondJump, target
		}
	case x86asm.CALL:
		if isRel {
			return Call, target
		}
		return IndirectCall, 0
	case x86asm.RET, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ, x86asm.SYSRET:
		return Return, 0
	case x86asm.HLT, x86asm.UD2, x86asm.UD1, x86asm.UD0:
		return Halt, 0
	case x86asm.INT:
		if len(b) > 0 && b[0] == 0xcc { // int3; int $n (old code's syscalls) returns
			return Halt, 0
		}
	}
	return Other, 0
}

// PLTSlot finds the `jmp *disp32(%rip)` (ff 25, possibly after endbr64
// and a bnd prefix) of a PLT entry and returns the GOT slot it reads.
func (amd64) PLTSlot(b []byte, addr uint64) (uint64, bool) {
	for i := 0; i+6 <= len(b) && i <= 8; i++ {
		if b[i] == 0xff && b[i+1] == 0x25 {
			disp := int32(uint32(b[i+2]) | uint32(b[i+3])<<8 | uint32(b[i+4])<<16 | uint32(b[i+5])<<24)
			return uint64(int64(addr) + int64(i+6) + int64(disp)), true
		}
	}
	return 0, false
}
