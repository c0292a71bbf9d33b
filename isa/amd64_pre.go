package isa

// A pre-decoder of x86-64, for the linear sweeps of whole modules (procs
// sweeps every byte of a stripped program: cc1plus is 5 million
// instructions). It is the same instruction set as decodeAMD64, not a
// second decoder: it reads the encodings that make up most compiled code
// (the integer ALU, mov, lea, push and pop, the direct branches, nops and
// a few SSE moves) from their bytes alone (prefixes, opcode, ModRM, SIB,
// displacement, immediate) and declines everything else, which x86asm
// then decodes in full. It declines too wherever the frame classification
// would need more than the bytes give cheaply: any operand naming SP or
// BP, prefixes other than 66 (and 2e on a nop), VEX, x87, and byte compares
// with an immediate. amd64_pre_test.go holds it equal to the full decode
// on every instruction of every x86-64 binary the tests can reach, and
// its fuzz target on random bytes.

// preModRM is what the classification needs of a ModRM operand.
type preModRM struct {
	mod, reg, rm byte
	end          int   // index after ModRM, SIB and displacement
	baseBP       bool  // a memory operand based on rbp (FrameOp.Inherits)
	rip          bool  // a rip-relative memory operand
	disp         int64 // its displacement as x86asm reads it (rip-relative only)
}

// preParseModRM parses the ModRM at b[i] with what follows it.
func preParseModRM(b []byte, i int, rex byte) (m preModRM, ok bool) {
	if i >= len(b) {
		return m, false
	}
	c := b[i]
	i++
	m.mod, m.reg, m.rm = c>>6, (c>>3)&7, c&7
	if m.mod == 3 {
		m.end = i
		return m, true
	}
	base, dispLen := m.rm, 0
	if m.rm == 4 {
		if i >= len(b) {
			return m, false
		}
		base = b[i] & 7
		i++
		if base == 5 && m.mod == 0 {
			dispLen = 4 // no base, disp32
		}
	} else if m.rm == 5 && m.mod == 0 {
		m.rip, dispLen = true, 4
	}
	switch m.mod {
	case 1:
		dispLen = 1
	case 2:
		dispLen = 4
	}
	if i+dispLen > len(b) {
		return m, false
	}
	if m.rip {
		// Zero-extended, as x86asm reads every disp32 (Mem.Disp), so the
		// pc-relative address is Frame's either way.
		m.disp = int64(le32(b[i:]))
	}
	m.end = i + dispLen
	m.baseBP = m.mod != 0 && base == 5 && rex&1 == 0
	return m, true
}

// preSPBP reports whether a register field names SP or BP in some size
// (or, without REX, AH or CH): the frame classification reads those.
func preSPBP(idx byte, ext bool) bool { return !ext && (idx == 4 || idx == 5) }

// preImm reads a sign-extended immediate of n bytes at b[i].
func preImm(b []byte, i, n int) (int64, bool) {
	if i+n > len(b) {
		return 0, false
	}
	switch n {
	case 1:
		return int64(int8(b[i])), true
	case 2:
		return int64(int16(uint16(b[i]) | uint16(b[i+1])<<8)), true
	case 4:
		return int64(int32(le32(b[i:]))), true
	}
	return 0, false
}

// preFrameAMD64 classifies the instruction at the start of b as Frame
// does, or declines (ok false) where only the full decode can.
func preFrameAMD64(b []byte, addr uint64) (op FrameOp, ok bool) {
	i, p66, p2e := 0, 0, 0
prefixes:
	for i < len(b) && i < 4 {
		switch b[i] {
		case 0x66:
			p66++
		case 0x2e:
			p2e++
		default:
			break prefixes
		}
		i++
	}
	var rex byte
	if i < len(b) && b[i]&0xf0 == 0x40 {
		rex = b[i]
		i++
	}
	if i >= len(b) {
		return op, false
	}
	c := b[i]
	i++
	if c == 0x0f && i < len(b) && b[i] == 0x1f && rex == 0 { // nopw/nopl, padding
		m, ok := preParseModRM(b, i+1, rex)
		if !ok || m.reg != 0 {
			return op, false
		}
		return FrameOp{Len: uint8(m.end), Pad: true}, true
	}
	if p2e > 0 || p66 > 1 {
		return op, false
	}
	if c == 0x90 && rex == 0 { // nop; 66 90, xchg ax,ax
		return FrameOp{Len: uint8(i), Pad: true}, true
	}
	if p66+int(rex) == 0 {
		if op, ok := preFlow(b, i, c, addr); ok {
			return op, true
		}
	}
	if c == 0x0f {
		return preTwoByte(b, i, rex, p66 == 1)
	}
	return preOneByte(b, i, c, rex, p66 == 1, addr)
}

// preFlow handles the unprefixed control transfers and fill of b (c the
// opcode, i after it): direct jumps and calls, ret, the one-byte nop.
func preFlow(b []byte, i int, c byte, addr uint64) (FrameOp, bool) {
	rel := func(n int, k Kind) (FrameOp, bool) {
		d, ok := preImm(b, i, n)
		if !ok {
			return FrameOp{}, false
		}
		end := i + n
		return FrameOp{Flow: k, Len: uint8(end), Target: uint64(int64(addr) + int64(end) + d)}, true
	}
	switch {
	case c == 0xe8:
		return rel(4, Call)
	case c == 0xe9:
		return rel(4, Jump)
	case c == 0xeb:
		return rel(1, Jump)
	case c >= 0x70 && c <= 0x7f:
		return rel(1, CondJump)
	case c == 0x0f && i < len(b) && b[i] >= 0x80 && b[i] <= 0x8f:
		i++
		return rel(4, CondJump)
	case c == 0xc3:
		return FrameOp{Flow: Return, Len: uint8(i)}, true
	}
	return FrameOp{}, false
}

// preOneByte handles the one-byte opcodes c of the integer instructions
// (i after the opcode; o16 the 66 prefix).
func preOneByte(b []byte, i int, c, rex byte, o16 bool, addr uint64) (FrameOp, bool) {
	w := rex&8 != 0
	immV := 4 // imm32, or imm16 under 66 without REX.W
	if o16 && !w {
		immV = 2
	}
	switch {
	case c < 0x40 && c&7 <= 3: // add, or, adc, sbb, and, sub, xor, cmp: r/m and reg
		return preRMOnly(b, i, rex, 0)
	case c < 0x40 && (c&7 == 4 || c&7 == 5): // the same on al/eax with an immediate
		n := 1
		if c&7 == 5 {
			n = immV
		} else if c == 0x3c {
			return FrameOp{}, false // cmp al,imm8: the immediate's reading is x86asm's
		}
		imm, ok := preImm(b, i, n)
		if !ok {
			return FrameOp{}, false
		}
		op := FrameOp{Len: uint8(i + n)}
		if c == 0x3d && imm > 0 {
			op.CmpImm = imm
		}
		return op, true
	case c >= 0x50 && c <= 0x5f:
		return prePushPop(i, c, rex, o16)
	case c == 0x63 && w, c == 0x84, c == 0x85, c == 0x88, c == 0x8a: // movsxd, test, byte mov
		return preRMOnly(b, i, rex, 0)
	case c == 0x89, c == 0x8b:
		return preMov(b, i, c, rex, o16)
	case c == 0x69 || c == 0x6b: // imul r, r/m, imm
		n := immV
		if c == 0x6b {
			n = 1
		}
		return preRMOnly(b, i, rex, n)
	case c == 0x80 || c == 0x81 || c == 0x83: // group 1: op r/m, imm
		n := immV
		if c != 0x81 {
			n = 1
		}
		return preGroup1(b, i, rex, c, n)
	case c == 0x8d: // lea
		return preLea(b, i, rex, o16, addr)
	case c >= 0xb0 && c <= 0xbf: // mov reg, imm
		if preSPBP(c&7, rex&1 != 0) {
			return FrameOp{}, false
		}
		n := 1
		if c >= 0xb8 {
			n = immV
			if w {
				n = 8
			}
		}
		if i+n > len(b) {
			return FrameOp{}, false
		}
		return FrameOp{Len: uint8(i + n)}, true
	case c == 0xc6 || c == 0xc7: // mov r/m, imm (/0 only: c6 f8 and c7 f8 are xabort, xbegin)
		n := immV
		if c == 0xc6 {
			n = 1
		}
		return preGroup(b, i, rex, n, func(reg byte) bool { return reg == 0 })
	case c == 0xc0 || c == 0xc1 || c >= 0xd0 && c <= 0xd3: // shifts and rotates
		n := 0
		if c < 0xd0 {
			n = 1
		}
		return preGroup(b, i, rex, n, func(reg byte) bool { return reg != 6 })
	case c == 0xf6 || c == 0xf7: // group 3: test imm, not, neg, mul, imul, div, idiv
		if i >= len(b) {
			return FrameOp{}, false
		}
		n := 0
		if reg := (b[i] >> 3) & 7; reg == 0 {
			n = immV
			if c == 0xf6 {
				n = 1
			}
		}
		return preGroup(b, i, rex, n, func(reg byte) bool { return reg != 1 })
	}
	return FrameOp{}, false
}

// preRM classifies an instruction of a ModRM operand (at b[i]) whose
// reg field names a general register, and immN bytes of immediate.
func preRM(b []byte, i int, rex byte, immN int) (FrameOp, preModRM, bool) {
	m, ok := preParseModRM(b, i, rex)
	if !ok || preSPBP(m.reg, rex&4 != 0) || m.mod == 3 && preSPBP(m.rm, rex&1 != 0) || m.end+immN > len(b) {
		return FrameOp{}, m, false
	}
	return FrameOp{Len: uint8(m.end + immN), Inherits: m.baseBP}, m, true
}

// preMov classifies mov between a register and r/m (89, 8b): a copy of
// rax or eax to a register is how a landing pad starts (Inherits).
func preMov(b []byte, i int, c, rex byte, o16 bool) (FrameOp, bool) {
	op, m, ok := preRM(b, i, rex, 0)
	if ok && m.mod == 3 && !(o16 && rex&8 == 0) {
		src, ext := m.reg, rex&4 != 0 // 89: mov r/m, reg
		if c == 0x8b {
			src, ext = m.rm, rex&1 != 0
		}
		op.Inherits = src == 0 && !ext
	}
	return op, ok
}

func preRMOnly(b []byte, i int, rex byte, immN int) (FrameOp, bool) {
	op, _, ok := preRM(b, i, rex, immN)
	return op, ok
}

// preGroup classifies an opcode-extension group (reg field selects the
// operation; valid says which it may be) on r/m with immN bytes of
// immediate.
func preGroup(b []byte, i int, rex byte, immN int, valid func(reg byte) bool) (FrameOp, bool) {
	m, ok := preParseModRM(b, i, rex)
	if !ok || !valid(m.reg) || m.mod == 3 && preSPBP(m.rm, rex&1 != 0) || m.end+immN > len(b) {
		return FrameOp{}, false
	}
	return FrameOp{Len: uint8(m.end + immN), Inherits: m.baseBP}, true
}

// preGroup1 classifies add..cmp r/m, imm; a compare of a register with a
// positive immediate is a jump table's bound (CmpImm).
func preGroup1(b []byte, i int, rex, c byte, immN int) (FrameOp, bool) {
	op, ok := preGroup(b, i, rex, immN, func(byte) bool { return true })
	if !ok {
		return op, false
	}
	if m := b[i]; m>>6 == 3 && (m>>3)&7 == 7 { // cmp reg, imm
		if c == 0x80 {
			return FrameOp{}, false // the byte form's immediate is x86asm's reading
		}
		if imm, _ := preImm(b, int(op.Len)-immN, immN); imm > 0 {
			op.CmpImm = imm
		}
	}
	return op, true
}

// preLea classifies lea: rip-relative, it computes an address (a jump
// table's base, FrameOp.PCRel).
func preLea(b []byte, i int, rex byte, o16 bool, addr uint64) (FrameOp, bool) {
	m, ok := preParseModRM(b, i, rex)
	if !ok || o16 || m.mod == 3 || preSPBP(m.reg, rex&4 != 0) {
		return FrameOp{}, false
	}
	op := FrameOp{Len: uint8(m.end), Inherits: m.baseBP}
	if m.rip {
		op.PCRel = uint64(int64(addr) + int64(m.end) + m.disp)
	}
	return op, true
}

// prePushPop classifies push and pop of a register (50+r, 58+r), only
// unprefixed or with a bare REX or REX.B.
func prePushPop(i int, c, rex byte, o16 bool) (FrameOp, bool) {
	if o16 || rex != 0 && rex != 0x40 && rex != 0x41 {
		return FrameOp{}, false
	}
	r := c&7 | (rex&1)<<3
	op := FrameOp{Len: uint8(i), Frame: SPAdd}
	if c < 0x58 {
		switch {
		case r == 5:
			return FrameOp{Len: uint8(i), Frame: PushBP}, true
		case r == 3 || r >= 12:
			op.PushCS = true
		}
		op.Imm = -8
		return op, true
	}
	switch r {
	case 5:
		return FrameOp{Len: uint8(i), Frame: PopBP}, true
	case 4:
		return FrameOp{Len: uint8(i), Frame: SPUnknown}, true
	}
	op.Imm, op.PopDI = 8, r == 7
	return op, true
}

// preTwoByte handles the 0f opcodes (b[i] the second byte): cmov, setcc,
// movzx and movsx, imul, bt, and SSE moves and xors of xmm registers.
func preTwoByte(b []byte, i int, rex byte, o16 bool) (FrameOp, bool) {
	if i >= len(b) {
		return FrameOp{}, false
	}
	c := b[i]
	i++
	switch {
	case c >= 0x40 && c <= 0x4f, c == 0xaf, c == 0xa3, c == 0xb6, c == 0xb7, c == 0xbe, c == 0xbf:
		return preRMOnly(b, i, rex, 0)
	case c >= 0x90 && c <= 0x9f: // setcc r/m8
		return preGroup(b, i, rex, 0, func(reg byte) bool { return reg == 0 })
	case c == 0x10, c == 0x11, c == 0x28, c == 0x29, c == 0x57, c == 0x6f, c == 0x7f, c == 0xef, c == 0x6e,
		o16 && (c == 0x6c || c == 0xd6):
		// The operands are xmm (mmx) registers or memory, and 0f 6e reads
		// a general register: none is a frame register's destination.
		m, ok := preParseModRM(b, i, rex)
		if !ok {
			return FrameOp{}, false
		}
		return FrameOp{Len: uint8(m.end), Inherits: m.baseBP}, true
	}
	return FrameOp{}, false
}
