package isa

// The value analysis's transfer function: how one instruction changes
// what is known of the registers, loads and flags (values.step).

import "golang.org/x/arch/x86/x86asm"

// implicitRegs are the registers instructions write without naming them.
var implicitRegs = map[x86asm.Op][]x86asm.Reg{
	x86asm.CPUID: {x86asm.RAX, x86asm.RBX, x86asm.RCX, x86asm.RDX},
	x86asm.RDTSC: {x86asm.RAX, x86asm.RDX}, x86asm.RDTSCP: {x86asm.RAX, x86asm.RCX, x86asm.RDX},
	x86asm.SYSCALL: {x86asm.RAX, x86asm.RCX, x86asm.R11},
	x86asm.CQO:     {x86asm.RDX}, x86asm.CDQ: {x86asm.RDX}, x86asm.CWD: {x86asm.RDX},
	x86asm.MUL: {x86asm.RAX, x86asm.RDX}, x86asm.DIV: {x86asm.RAX, x86asm.RDX},
	x86asm.IDIV: {x86asm.RAX, x86asm.RDX}, x86asm.CMPXCHG: {x86asm.RAX},
	x86asm.LOOP: {x86asm.RCX}, x86asm.LOOPE: {x86asm.RCX}, x86asm.LOOPNE: {x86asm.RCX},
	x86asm.XLATB: {x86asm.RAX}, x86asm.LAHF: {x86asm.RAX},
	x86asm.STOSB: {x86asm.RDI, x86asm.RCX}, x86asm.STOSW: {x86asm.RDI, x86asm.RCX},
	x86asm.STOSD: {x86asm.RDI, x86asm.RCX}, x86asm.STOSQ: {x86asm.RDI, x86asm.RCX},
	x86asm.MOVSB: {x86asm.RDI, x86asm.RSI, x86asm.RCX}, x86asm.MOVSW: {x86asm.RDI, x86asm.RSI, x86asm.RCX},
	x86asm.MOVSD: {x86asm.RDI, x86asm.RSI, x86asm.RCX}, x86asm.MOVSQ: {x86asm.RDI, x86asm.RSI, x86asm.RCX},
	x86asm.LODSB: {x86asm.RAX, x86asm.RSI, x86asm.RCX}, x86asm.LODSW: {x86asm.RAX, x86asm.RSI, x86asm.RCX},
	x86asm.LODSD: {x86asm.RAX, x86asm.RSI, x86asm.RCX}, x86asm.LODSQ: {x86asm.RAX, x86asm.RSI, x86asm.RCX},
	x86asm.SCASB: {x86asm.RDI, x86asm.RCX}, x86asm.SCASW: {x86asm.RDI, x86asm.RCX},
	x86asm.SCASD: {x86asm.RDI, x86asm.RCX}, x86asm.SCASQ: {x86asm.RDI, x86asm.RCX},
	x86asm.CMPSB: {x86asm.RDI, x86asm.RSI, x86asm.RCX}, x86asm.CMPSW: {x86asm.RDI, x86asm.RSI, x86asm.RCX},
	x86asm.CMPSD: {x86asm.RDI, x86asm.RSI, x86asm.RCX}, x86asm.CMPSQ: {x86asm.RDI, x86asm.RSI, x86asm.RCX},
	x86asm.XGETBV: {x86asm.RAX, x86asm.RDX},
}

// callerSaved are the registers a call may change (System V).
var callerSaved = []x86asm.Reg{x86asm.RAX, x86asm.RCX, x86asm.RDX, x86asm.RSI, x86asm.RDI,
	x86asm.R8, x86asm.R9, x86asm.R10, x86asm.R11}

// step applies instruction x (at path position i, next: the address
// after it) to the state.
func (s *values) step(x x86asm.Inst, next uint64) {
	if x.Op == 0 {
		// What x86asm does not decode (endbr64 aside, which the caller
		// skips): xgetbv and the like; assume the worst.
		s.clobber(callerSaved...)
		s.clobber(x86asm.RBX, x86asm.RBP, x86asm.R12, x86asm.R13, x86asm.R14, x86asm.R15)
		s.flags = nil
		clear(s.loads)
		return
	}
	if !keepsFlags(x.Op) && x.Op != x86asm.JMP {
		s.flags = nil
	}
	if rs, ok := implicitRegs[x.Op]; ok {
		s.clobber(rs...)
	}
	if x.Op == x86asm.CALL {
		s.clobber(callerSaved...)
		clear(s.loads)
		return
	}
	if s.stepWhole(x) {
		return
	}
	m, isMem := x.Args[0].(x86asm.Mem)
	if isMem && x.Op != x86asm.CMP && x.Op != x86asm.TEST {
		clear(s.loads) // a store may change what a load read
	}
	if isMem && x.Op == x86asm.CMP && x.MemBytes > 0 && x.MemBytes <= 8 {
		// cmpl $5,0x78(%rbx); ja; ... mov 0x78(%rbx),%eax: the same load.
		w := uint8(8 * x.MemBytes)
		a := s.load(m, next, x.MemBytes, false)
		if b, ok := s.operand(x.Args[1], w); ok {
			s.flags = &cmpFact{regVal{a.v, w}, b}
		}
		return
	}
	dst, isReg := x.Args[0].(x86asm.Reg)
	if !isReg {
		return
	}
	_, w, _, gp := regWidth(dst)
	if !gp || s.stepFlags(x, dst, w) {
		return
	}
	s.stepArith(x, dst, w, next)
}

// stepWhole applies the instructions that write their registers whole
// (sign extensions of rax, exchanges) and reports whether x was one; it
// also forgets the loads a push or pop may change.
func (s *values) stepWhole(x x86asm.Inst) bool {
	switch x.Op {
	case x86asm.CDQE:
		s.write(x86asm.RAX, regVal{s.sext(s.read(x86asm.EAX)), 64})
		return true
	case x86asm.CWDE:
		s.write(x86asm.EAX, regVal{s.sext(s.read(x86asm.AX)), 32})
		return true
	case x86asm.XCHG, x86asm.XADD:
		// Both operands change; xchg of two registers is followed below.
		r1, ok1 := x.Args[0].(x86asm.Reg)
		r2, ok2 := x.Args[1].(x86asm.Reg)
		if !ok1 || !ok2 || x.Op == x86asm.XADD {
			for _, a := range x.Args[:2] {
				if r, ok := a.(x86asm.Reg); ok {
					s.write(r, s.unknown(64))
				}
			}
			clear(s.loads)
			return true
		}
		if r1 != r2 {
			a, b := s.read(r1), s.read(r2)
			s.write(r1, b)
			s.write(r2, a)
		}
		return true
	case x86asm.PUSH, x86asm.POP, x86asm.PUSHF, x86asm.POPF:
		clear(s.loads) // the stack pointer moves, and a push stores
	}
	return false
}

// stepFlags applies the instructions with a register operand that write
// no register (comparisons set the flags) and reports whether x was one.
func (s *values) stepFlags(x x86asm.Inst, dst x86asm.Reg, w uint8) bool {
	src := x.Args[1]
	switch x.Op {
	case x86asm.CMP:
		a, ok1 := s.operand(dst, w)
		b, ok2 := s.operand(src, w)
		if ok1 && ok2 {
			s.flags = &cmpFact{a, b}
		}
		return true
	case x86asm.TEST:
		if r, ok := src.(x86asm.Reg); ok && r == dst {
			a, _ := s.operand(dst, w)
			s.flags = &cmpFact{a, regVal{constLin(0), w}}
		}
		return true
	case x86asm.PUSH, x86asm.NOP, x86asm.BT, x86asm.PREFETCHT0, x86asm.PREFETCHNTA:
		return true
	}
	return isJcc(x.Op) || x.Op == x86asm.JMP
}

// stepArith applies an instruction that writes general-purpose register
// dst, of width w.
func (s *values) stepArith(x x86asm.Inst, dst x86asm.Reg, w uint8, next uint64) {
	src := x.Args[1]
	set := func(v vlin) { s.write(dst, regVal{v, w}) }
	switch x.Op {
	case x86asm.MOV:
		switch a := src.(type) {
		case x86asm.Mem:
			s.write(dst, s.load(a, next, int(w/8), false))
		default:
			if v, ok := s.operand(src, w); ok {
				set(v.v)
				return
			}
			s.write(dst, s.unknown(64))
		}
	case x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD:
		signed := x.Op != x86asm.MOVZX
		switch a := src.(type) {
		case x86asm.Mem:
			size := x.MemBytes
			if size == 0 {
				size = 4
			}
			v := s.load(a, next, size, signed)
			set(v.v)
		case x86asm.Reg:
			v := s.read(a)
			set(s.extend(v, signed).v)
		}
	case x86asm.LEA:
		m, ok := src.(x86asm.Mem)
		if !ok {
			s.write(dst, s.unknown(64))
			return
		}
		if v, ok := s.address(m, next); ok {
			set(v)
			return
		}
		s.write(dst, s.unknown(64))
	case x86asm.ADD, x86asm.SUB:
		a, ok1 := s.operand(dst, w)
		b, ok2 := s.operand(src, w)
		if !ok1 || !ok2 {
			s.write(dst, s.unknown(64))
			return
		}
		sign := int64(1)
		if x.Op == x86asm.SUB {
			sign = -1
			s.flags = &cmpFact{a, b}
		}
		if r, ok := src.(x86asm.Reg); ok && r == dst && sign < 0 {
			set(constLin(0))
			return
		}
		if v, ok := s.add(a.v, b.v, sign); ok {
			set(v)
			return
		}
		s.write(dst, s.unknown(64))
	case x86asm.INC, x86asm.DEC:
		a, _ := s.operand(dst, w)
		d := int64(1)
		if x.Op == x86asm.DEC {
			d = -1
		}
		set(vlin{t: a.v.t, n: a.v.n, k: satAdd(a.v.k, d)})
	case x86asm.NEG:
		a, _ := s.operand(dst, w)
		if v, ok := s.scale(a.v, -1); ok {
			set(v)
			return
		}
		s.write(dst, s.unknown(64))
	case x86asm.XOR:
		if r, ok := src.(x86asm.Reg); ok && r == dst {
			set(constLin(0))
			return
		}
		s.write(dst, s.unknown(64))
	case x86asm.AND:
		s.and(dst, src, w)
	case x86asm.SHL, x86asm.SHR, x86asm.SAR:
		imm, ok := src.(x86asm.Imm)
		if !ok || imm < 0 || int64(imm) >= int64(w) {
			s.write(dst, s.unknown(64))
			return
		}
		a, _ := s.operand(dst, w)
		if x.Op == x86asm.SHL {
			if v, ok := s.scale(a.v, int64(1)<<imm); ok {
				set(v)
				return
			}
			s.write(dst, s.unknown(64))
			return
		}
		v := s.zext(a)
		if x.Op == x86asm.SAR {
			v = s.sext(a)
		}
		r := s.rng(v)
		if r.lo < 0 || r.hi >= inf {
			s.write(dst, s.unknown(64))
			return
		}
		set(s.rootLin(s.newRoot(ival{r.lo >> imm, r.hi >> imm})))
	case x86asm.CMOVA, x86asm.CMOVAE, x86asm.CMOVB, x86asm.CMOVBE, x86asm.CMOVE, x86asm.CMOVNE,
		x86asm.CMOVG, x86asm.CMOVGE, x86asm.CMOVL, x86asm.CMOVLE, x86asm.CMOVS, x86asm.CMOVNS:
		// One of the two values: a root in the hull of both.
		a, ok1 := s.operand(dst, w)
		b, ok2 := s.operand(src, w)
		if !ok1 || !ok2 {
			s.write(dst, s.unknown(64))
			return
		}
		ra, rb := s.rng(s.zext(a)), s.rng(s.zext(b))
		set(s.rootLin(s.newRoot(ival{min(ra.lo, rb.lo), max(ra.hi, rb.hi)})))
	default:
		s.write(dst, s.unknown(64))
	}
}

// and applies dst &= src.
func (s *values) and(dst x86asm.Reg, src x86asm.Arg, w uint8) {
	a, _ := s.operand(dst, w)
	ra := s.rng(s.zext(a))
	var mask int64 = -1
	switch b := src.(type) {
	case x86asm.Imm:
		mask = int64(b)
		if w < 64 {
			mask = int64(uint64(mask) & uint64(widthRange(w).hi))
		}
	case x86asm.Reg:
		if v, ok := s.operand(b, w); ok {
			if r := s.rng(s.zext(v)); r.lo >= 0 && r.hi < inf {
				mask = r.hi
				if r.lo == r.hi {
					mask = r.lo
				}
			}
		}
	}
	if mask < 0 {
		s.write(dst, s.unknown(64))
		return
	}
	if ra.lo >= 0 && ra.hi <= mask && mask&(mask+1) == 0 {
		s.write(dst, regVal{s.zext(a), w}) // the mask keeps every bit the value may have
		return
	}
	hi := mask
	if ra.lo >= 0 && ra.hi < hi {
		hi = ra.hi
	}
	s.write(dst, regVal{s.rootLin(s.newRoot(ival{0, hi})), w})
}
