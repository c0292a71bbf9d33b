package isa

// AArch64 frame operations, for the unwinder's recipes and the inference
// of procedure bounds (AAPCS64: the return address arrives in x30, the
// frame pointer is x29, a frame record is x29 and x30 stored together).
// The few encodings that move SP or touch x29 and x30 are read from their
// bits (Arm ARM C4.1: loads and stores, data processing), as Decode does.

import "encoding/binary"

// Registers of the frame: SP and XZR share number 31.
const (
	a64FP = 29
	a64LR = 30
	a64SP = 31
)

// Words of the hint space that mark entries and padding.
const (
	a64Nop     = 0xd503201f
	a64Paciasp = 0xd503233f // sign LR with key A and SP: a prologue's first
	a64Pacibsp = 0xd503237f
	a64Autiasp = 0xd50323bf
	a64Autibsp = 0xd50323ff
	a64BtiC    = 0xd503245f // landing mark of an indirect call
	a64BtiJC   = 0xd50324df
)

// arm64ClearFP is shared, not made per call (the unwinder asks per frame).
var arm64ClearFP = []byte{0x1d, 0x00, 0x80, 0xd2}

// ClearFP is mov x29, #0 (movz), which _start and clone's child run.
func (arm64) ClearFP() []byte { return arm64ClearFP }

// ABI: the return address in x30; gcc and clang describe the CFA from SP
// and keep x29's frame record for the frame-pointer chain; user addresses
// have 48 bits, the rest of a signed return address is its PAC.
func (arm64) ABI() FrameABI {
	return FrameABI{LinkRegister: true, FrameRecord: true, CFAFromSP: true, RABits: 48}
}

// Frame classifies the instruction at addr by its effect on the frame.
func (arm64) Frame(b []byte, addr uint64) FrameOp {
	op := FrameOp{Len: 4}
	if len(b) < 4 {
		op.Flow = Invalid
		return op
	}
	w := binary.LittleEndian.Uint32(b)
	op.Flow, op.Target = flowARM64(w, addr)
	switch w {
	case a64Nop:
		op.Pad = true
		return op
	case 0: // udf #0: the linker's fill between input sections
		op.Pad = true
		return op
	case a64Paciasp, a64Pacibsp, a64BtiC, a64BtiJC:
		op.Endbr = true
		return op
	case a64Autiasp, a64Autibsp:
		return op
	}
	if op.Flow != Other {
		return op
	}
	switch {
	case w>>27&7 == 5 && w>>25&1 == 0: // load/store pair
		a64Pair(w, &op)
	case w>>27&7 == 7 && w>>24&3 == 0 && w>>21&1 == 0: // load/store, 9-bit offset
		a64Single(w, int64(int32(w<<11)>>23), w>>10&3, &op)
	case w>>27&7 == 7 && w>>24&3 == 1: // load/store, unsigned 12-bit offset
		size := a64Size(w)
		a64Single(w, int64(w>>10&0xfff)*size, 0, &op)
	case w&0x1f800000 == 0x11000000: // add/sub (immediate)
		a64AddImm(w, &op)
	case w&0x1fe00000 == 0x0b200000: // add/sub (extended register): Rd 31 is SP
		if w>>29&1 == 0 {
			a64Dest(w&31, true, &op)
			if w&31 == a64SP && w>>5&31 == a64SP && w>>31 == 1 && w>>10&7 == 0 {
				// sub sp, sp, xN (uxtx #0): a large frame, if xN is a constant
				op.Frame, op.Reg, op.Imm = SPAddReg, uint8(w>>16&31)+1, 1
				if w>>30&1 == 1 {
					op.Imm = -1
				}
			}
		}
	case w&0x1f800000 == 0x12800000: // move wide: movn, movz, movk
		a64MoveWide(w, &op)
	case w&0x1f800000 == 0x12000000: // logical (immediate): Rd 31 is SP unless ands
		a64Dest(w&31, w>>29&3 != 3, &op)
	case w>>26&7 == 4 || w>>25&7 == 5: // other data processing: Rd 31 is xzr
		if w>>21&0xff != 0xd2 { // not ccmp/ccmn, whose low bits are flags
			a64Dest(w&31, false, &op)
		}
	}
	op.SubSP = op.Frame == SPAdd && op.Imm < 0
	op.AddSP = op.Frame == SPAdd && op.Imm > 0
	return op
}

// a64MoveWide: movz and movn set a register to a constant, movk
// replaces 16 of its bits, as compilers build large frame sizes.
func a64MoveWide(w uint32, op *FrameOp) {
	rd, shift := w&31, uint8(w>>21&3)*16
	imm := int64(w>>5&0xffff) << shift
	switch w >> 29 & 3 {
	case 0: // movn
		imm = ^imm
		if w>>31 == 0 {
			imm &= 0xffffffff
		}
		op.Frame, op.Imm = ConstSet, imm
	case 2: // movz
		op.Frame, op.Imm = ConstSet, imm
	case 3: // movk
		op.Frame, op.Imm, op.Shift = ConstKeep, imm, shift
	default:
		return
	}
	op.Reg = uint8(rd) + 1
	if rd == a64FP || rd == a64LR {
		op.Frame, op.Reg, op.Imm, op.Shift = None, 0, 0, 0
		a64Dest(rd, false, op)
	}
}

// a64Size is the access size in bytes of a single load or store.
func a64Size(w uint32) int64 {
	size := int64(1) << (w >> 30)
	if w>>26&1 == 1 && w>>23&1 == 1 { // 128-bit SIMD&FP register
		size = 16
	}
	return size
}

// a64Pair: stp/ldp (and their SIMD&FP forms). Only x29 and x30 matter, as
// frame slots or registers written; writeback to SP moves it.
func a64Pair(w uint32, op *FrameOp) {
	opc, simd, idx, load := w>>30, w>>26&1 == 1, w>>23&3, w>>22&1 == 1
	scale := int64(4) << opc
	if !simd && opc != 0 {
		scale = 8 // 64-bit, or ldpsw (loads 4 bytes into 64-bit registers)
	}
	off := int64(int32(w<<10)>>25) * scale
	rn, rt, rt2 := w>>5&31, w&31, w>>10&31
	at := off // the address relative to SP before the instruction
	if idx == 1 {
		at = 0 // post-index: the access, then the update
	}
	switch {
	case !simd && opc == 2:
		a64Slot(rn, rt, at, load, op)
		a64Slot(rn, rt2, at+scale, load, op)
	case !simd && load:
		a64Dest(rt, false, op) // 32-bit halves overwrite the registers
		a64Dest(rt2, false, op)
	}
	if rn == a64SP && (idx == 1 || idx == 3) {
		op.Frame, op.Imm = SPAdd, off
	}
}

// a64Single: str/ldr and relatives with an immediate offset. idx is the
// 9-bit offset forms' mode: 1 post-index, 3 pre-index, 0 and 2 none.
func a64Single(w uint32, off int64, idx uint32, op *FrameOp) {
	rn, rt := w>>5&31, w&31
	simd := w>>26&1 == 1
	opc := w >> 22 & 3
	load := opc != 0
	if simd {
		load = opc&1 == 1
	} else if w>>30 == 3 && opc == 2 {
		return // prfm
	}
	at := off
	if idx == 1 {
		at = 0
	}
	if !simd && w>>30 == 3 { // only 64-bit registers hold x29 and x30 whole
		a64Slot(rn, rt, at, load, op)
	} else if !simd && load && (rt == a64FP || rt == a64LR) {
		a64Dest(rt, false, op) // a narrower load overwrites them
	}
	if rn == a64SP && (idx == 1 || idx == 3) {
		op.Frame, op.Imm = SPAdd, off
	}
}

// a64Slot records a 64-bit store or load of register rt at SP+at when the
// base rn is SP, and a load of x29 or x30 from elsewhere as a write.
func a64Slot(rn, rt uint32, at int64, load bool, op *FrameOp) {
	if rn == a64FP {
		op.Inherits = true // a frame in x29 this code did not set up: a landing pad's
	}
	if rt != a64FP && rt != a64LR {
		return
	}
	if rn != a64SP || at < -1<<15 || at >= 1<<15 {
		if load {
			a64Dest(rt, false, op)
		}
		return
	}
	s := SlotStore
	if load {
		s = SlotLoad
	}
	if rt == a64FP {
		op.BPSlot, op.BPOff = s, int16(at)
	} else {
		op.RASlot, op.RAOff = s, int16(at)
	}
}

// a64AddImm: add/sub (immediate), which sets up and releases frames: sub
// sp, sp, #n; mov x29, sp (add x29, sp, #0); add sp, x29, #n.
func a64AddImm(w uint32, op *FrameOp) {
	sub, setFlags := w>>30&1 == 1, w>>29&1 == 1
	imm := int64(w >> 10 & 0xfff)
	if w>>22&1 == 1 {
		imm <<= 12
	}
	if sub {
		imm = -imm
	}
	rn, rd := w>>5&31, w&31
	if setFlags {
		if rd == 31 && imm < 0 {
			op.CmpImm = -imm // cmp xN, #imm (subs xzr): a bound
		}
		a64Dest(rd, false, op)
		return
	}
	switch {
	case rd == a64SP && rn == a64SP:
		op.Frame, op.Imm = SPAdd, imm
	case rd == a64SP && rn == a64FP:
		op.Frame, op.Imm = SPFromBP, imm
	case rd == a64FP && rn == a64SP:
		op.Frame, op.Imm = BPFromSP, imm
	default:
		a64Dest(rd, true, op)
	}
}

// a64Dest records a write of register rd by an instruction that does not
// set up or release a frame; sp says whether number 31 is SP there.
func a64Dest(rd uint32, sp bool, op *FrameOp) {
	switch {
	case rd == a64SP && sp:
		op.Frame = SPUnknown
	case rd == a64FP:
		op.Frame = BPWrite
	case rd == a64LR:
		op.LR = LRClobber
	}
}
