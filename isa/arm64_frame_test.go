package isa

import (
	"encoding/binary"
	"testing"
)

// TestFrameARM64 classifies the frame operations of gcc's and clang's
// prologues and epilogues, pointer authentication and the writes that
// end a frame's known shape (words from aarch64-linux-gnu-as).
func TestFrameARM64(t *testing.T) {
	cases := []struct {
		name string
		w    uint32
		want FrameOp
	}{
		{"stp x29, x30, [sp, #-32]!", 0xa9be7bfd, FrameOp{Frame: SPAdd, Imm: -32, SubSP: true, BPSlot: SlotStore, BPOff: -32, RASlot: SlotStore, RAOff: -24}},
		{"mov x29, sp", 0x910003fd, FrameOp{Frame: BPFromSP}},
		{"stp x19, x20, [sp, #16]", 0xa90153f3, FrameOp{}},
		{"ldp x19, x20, [sp, #16]", 0xa94153f3, FrameOp{}},
		{"ldp x29, x30, [sp], #32", 0xa8c27bfd, FrameOp{Frame: SPAdd, Imm: 32, AddSP: true, BPSlot: SlotLoad, RASlot: SlotLoad, RAOff: 8}},
		{"ret", 0xd65f03c0, FrameOp{Flow: Return}},
		{"sub sp, sp, #0x40", 0xd10103ff, FrameOp{Frame: SPAdd, Imm: -0x40, SubSP: true}},
		{"add sp, sp, #0x40", 0x910103ff, FrameOp{Frame: SPAdd, Imm: 0x40, AddSP: true}},
		{"sub sp, sp, #0x1, lsl #12", 0xd14007ff, FrameOp{Frame: SPAdd, Imm: -0x1000, SubSP: true}},
		{"stp x29, x30, [sp, #32] (clang)", 0xa9027bfd, FrameOp{BPSlot: SlotStore, BPOff: 32, RASlot: SlotStore, RAOff: 40}},
		{"add x29, sp, #0x20", 0x910083fd, FrameOp{Frame: BPFromSP, Imm: 0x20}},
		{"ldp x29, x30, [sp, #32]", 0xa9427bfd, FrameOp{BPSlot: SlotLoad, BPOff: 32, RASlot: SlotLoad, RAOff: 40}},
		{"str x30, [sp, #-16]!", 0xf81f0ffe, FrameOp{Frame: SPAdd, Imm: -16, SubSP: true, RASlot: SlotStore, RAOff: -16}},
		{"ldr x30, [sp], #16", 0xf84107fe, FrameOp{Frame: SPAdd, Imm: 16, AddSP: true, RASlot: SlotLoad}},
		{"sub sp, sp, x0 (alloca)", 0xcb2063ff, FrameOp{Frame: SPAddReg, Reg: 1, Imm: -1}},
		{"mov x12, #0x36d0", 0xd286da0c, FrameOp{Frame: ConstSet, Reg: 13, Imm: 0x36d0}},
		{"movk x12, #0x1, lsl #16", 0xf2a0002c, FrameOp{Frame: ConstKeep, Reg: 13, Imm: 0x10000, Shift: 16}},
		{"mov x12, #-0x10001 (movn)", 0x92a0002c, FrameOp{Frame: ConstSet, Reg: 13, Imm: -0x10001}},
		{"mov sp, x29", 0x910003bf, FrameOp{Frame: SPFromBP}},
		{"sub sp, x29, #0x10", 0xd10043bf, FrameOp{Frame: SPFromBP, Imm: -0x10}},
		{"mov x29, x0", 0xaa0003fd, FrameOp{Frame: BPWrite}},
		{"paciasp", 0xd503233f, FrameOp{Endbr: true}},
		{"autiasp", 0xd50323bf, FrameOp{}},
		{"retaa", 0xd65f0bff, FrameOp{Flow: Return}},
		{"bti c", 0xd503245f, FrameOp{Endbr: true}},
		{"nop", 0xd503201f, FrameOp{Pad: true}},
		{"udf #0 (fill)", 0, FrameOp{Flow: Halt, Pad: true}},
		{"bl .+8", 0x94000002, FrameOp{Flow: Call, Target: 0x1008}},
		{"blr x1", 0xd63f0020, FrameOp{Flow: IndirectCall}},
		{"br x16", 0xd61f0200, FrameOp{Flow: IndirectJump}},
		{"cbz x0, .+8", 0xb4000040, FrameOp{Flow: CondJump, Target: 0x1008}},
		{"ldr x0, [x29, #16] (a landing pad's)", 0xf9400ba0, FrameOp{Inherits: true}},
		{"mov x30, x1", 0xaa0103fe, FrameOp{LR: LRClobber}},
		{"and sp, x0, #-16", 0x927cec1f, FrameOp{Frame: SPUnknown}},
		{"cmp w0, #0x7", 0x71001c1f, FrameOp{CmpImm: 7}},
		{"str x29, [sp, #8]", 0xf90007fd, FrameOp{BPSlot: SlotStore, BPOff: 8}},
		{"ldr w30, [sp]", 0xb94003fe, FrameOp{LR: LRClobber}},
		{"stp d8, d9, [sp, #-48]!", 0x6dbd27e8, FrameOp{Frame: SPAdd, Imm: -48, SubSP: true}},
		{"ldr q0, [sp, #32]", 0x3dc00be0, FrameOp{}},
		{"mov x29, #0 (ClearFP)", 0xd280001d, FrameOp{Frame: BPWrite}},
	}
	for _, c := range cases {
		b := binary.LittleEndian.AppendUint32(nil, c.w)
		c.want.Len = 4
		if got := (arm64{}).Frame(b, 0x1000); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
	if got := (arm64{}).Frame([]byte{1, 2}, 0x1000); got.Flow != Invalid {
		t.Errorf("short: got %+v", got)
	}
	if b := (arm64{}).ClearFP(); binary.LittleEndian.Uint32(b) != 0xd280001d {
		t.Errorf("ClearFP %x", b)
	}
}
