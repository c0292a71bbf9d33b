package isa

// ppc64le (64-bit Power, ELFv2, little-endian): decoding and control-flow
// kinds. golang.org/x/arch's ppc64asm decodes (it also knows Power10's
// 8-byte prefixed instructions); the kind of a branch is read from its
// encoding's fields, where BO decides "always" against conditional and LK
// makes a branch a call.

import (
	"encoding/binary"

	"golang.org/x/arch/ppc64/ppc64asm"
)

// ppc64le is the instruction set; toc is the module's TOC base (the value
// of r2 in its code, see WithTOC), 0 when not known.
type ppc64le struct{ toc uint64 }

func (ppc64le) Name() string { return "ppc64le" }
func (ppc64le) MaxLen() int  { return 8 }
func (ppc64le) Align() int   { return 4 }

// WithTOC binds the instruction set to the module's TOC base: PLT stubs
// and gcc's jump tables address their slots from r2.
func (p ppc64le) WithTOC(toc uint64) Arch { p.toc = toc; return p }

// decodePPC decodes the instruction at the start of b. ok is false for
// bytes that are no instruction (the zero word included: compilers and
// linkers pad with it, and ppc64asm returns it as an empty instruction).
func decodePPC(b []byte) (x ppc64asm.Inst, ok bool) {
	if len(b) < 4 {
		return x, false
	}
	x, err := ppc64asm.Decode(b, binary.LittleEndian)
	if err != nil || x.Op == 0 {
		return x, false
	}
	return x, true
}

// BO's bits 0 and 2 (0x10 and 0x04): the branch ignores the condition and
// does not decrement CTR, so it is always taken.
func boAlways(bo uint32) bool { return bo&0x14 == 0x14 }

// Decode classifies the instruction at addr.
func (ppc64le) Decode(b []byte, addr uint64) Inst {
	x, ok := decodePPC(b)
	if !ok {
		return Inst{Addr: addr, Len: 4, Kind: Invalid}
	}
	in := Inst{Addr: addr, Len: x.Len}
	if x.Len != 4 {
		return in // no prefixed instruction branches
	}
	in.Kind, in.Target = flowPPC(x.Enc, addr)
	return in
}

// flowPPC is the control-flow kind of the 4-byte instruction w at addr
// and its direct target.
func flowPPC(w uint32, addr uint64) (Kind, uint64) {
	lk := w&1 != 0
	abs := w&2 != 0
	switch w >> 26 {
	case 18: // b, ba, bl, bla
		t := uint64(int64(int32(w&0x03fffffc<<6) >> 6))
		if !abs {
			t += addr
		}
		switch {
		case !lk:
			return Jump, t
		case t == addr+4:
			return Other, 0 // bl .+4 reads the PC into LR: not a call
		}
		return Call, t
	case 16: // bc and its extended mnemonics (beq, bdnz, ...)
		t := uint64(int64(int16(w & 0xfffc)))
		if !abs {
			t += addr
		}
		always := boAlways(w >> 21 & 31)
		switch {
		case lk && t == addr+4:
			return Other, 0 // bcl 20,31,.+4 reads the PC: not a call
		case lk:
			return Call, t // a conditional call falls through too
		case always:
			return Jump, t
		}
		return CondJump, t // bdnz too: it falls through once CTR runs out
	case 19:
		always := boAlways(w >> 21 & 31)
		switch w >> 1 & 0x3ff {
		case 16: // bclr: blr, beqlr, blrl
			switch {
			case lk:
				return IndirectCall, 0
			case always:
				return Return, 0
			}
			return CondReturn, 0
		case 528, 560: // bcctr, bctar: bctr, bctrl, bnectr
			switch {
			case lk:
				return IndirectCall, 0
			case always:
				return IndirectJump, 0
			}
			// Compilers use a conditional bcctr neither for jump tables
			// nor calls: it leaves the procedure or falls through.
			return CondReturn, 0
		case 18, 82, 274: // rfid, rfscv, hrfid: back from an interrupt
			return Return, 0
		}
	case 31: // tw, td: a trap when its condition holds
		xo := w >> 1 & 0x3ff
		to, ra, rb := w>>21&31, w>>16&31, w>>11&31
		if (xo == 4 || xo == 68) && (to == 31 || ra == rb && to&4 != 0) {
			return Halt, 0 // trap, or tw with a condition that always holds
		}
	case 2, 3: // tdi, twi
		if w>>21&31 == 31 {
			return Halt, 0
		}
	}
	return Other, 0
}
