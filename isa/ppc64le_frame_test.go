package isa

import (
	"encoding/binary"
	"testing"
)

// TestFramePPC64LE classifies the frame operations of ELFv2 prologues and
// epilogues: the TOC setup of a global entry, the LR copy in r0 and its
// slot in the caller's frame, stdu's frame and back chain, r31 as frame
// pointer, and the writes that end a frame's known shape (words from
// powerpc64le-linux-gnu-as).
func TestFramePPC64LE(t *testing.T) {
	cases := []struct {
		name string
		w    uint32
		want FrameOp
	}{
		{"addis r2,r12,2 (global entry)", 0x3c4c0002, FrameOp{Endbr: true}},
		{"addi r2,r2,28160", 0x38426e00, FrameOp{Reg: 3}},
		{"mflr r0", 0x7c0802a6, FrameOp{LR: LRToCopy, Reg: 1, PushCS: true}},
		{"std r0,16(r1)", 0xf8010010, FrameOp{RASlot: SlotStoreCopy, RAOff: 16, Reg: 1}},
		{"std r31,-8(r1)", 0xfbe1fff8, FrameOp{BPSlot: SlotStore, BPOff: -8, PushCS: true}},
		{"stdu r1,-64(r1)", 0xf821ffc1, FrameOp{Frame: SPAdd, Imm: -64, SubSP: true}},
		{"mr r31,r1", 0x7c3f0b78, FrameOp{Frame: BPFromSP}},
		{"stdux r1,r1,r9 (alloca)", 0x7c21496a, FrameOp{Frame: SPAddReg, Reg: 10, Imm: 1}},
		{"lis r0,-1", 0x3c00ffff, FrameOp{Frame: ConstSet, Reg: 1, Imm: -0x10000}},
		{"ori r0,r0,32160", 0x60007da0, FrameOp{Frame: ConstOr, Reg: 1, Imm: 32160}},
		{"addi r1,r1,64", 0x38210040, FrameOp{Frame: SPAdd, Imm: 64, AddSP: true}},
		{"ld r1,0(r1)", 0xe8210000, FrameOp{Frame: SPFromChain}},
		{"ld r0,16(r1)", 0xe8010010, FrameOp{RASlot: SlotLoadCopy, RAOff: 16, Reg: 1}},
		{"ld r31,-8(r1)", 0xebe1fff8, FrameOp{BPSlot: SlotLoad, BPOff: -8}},
		{"mtlr r0", 0x7c0803a6, FrameOp{LR: LRFromCopy, Reg: 1}},
		{"blr", 0x4e800020, FrameOp{Flow: Return}},
		{"mr r1,r31", 0x7fe1fb78, FrameOp{Frame: SPFromBP}},
		{"addi r1,r31,64", 0x383f0040, FrameOp{Frame: SPFromBP, Imm: 64}},
		{"li r0,0", 0x38000000, FrameOp{Frame: ConstSet, Reg: 1}},
		{"li r31,5", 0x3be00005, FrameOp{Frame: BPWrite}},
		{"mtlr r9", 0x7d2803a6, FrameOp{LR: LRFromCopy, Reg: 10}},
		{"bcl 20,31,.+4", 0x429f0005, FrameOp{LR: LRClobber}},
		{"nop", 0x60000000, FrameOp{Pad: true}},
		{"ori r2,r2,0", 0x60420000, FrameOp{Pad: true}},
		{"ori r1,r1,0", 0x60210000, FrameOp{Pad: true}},
		{"bl .+8", 0x48000009, FrameOp{Flow: Call, Target: 0x1008}},
		{"scv 0", 0x44000001, FrameOp{LR: LRClobber}},
		{"ld r2,24(r1) (TOC restore)", 0xe8410018, FrameOp{TOCRestore: true}},
		{"bctr", 0x4e800420, FrameOp{Flow: IndirectJump}},
		{"bctrl", 0x4e800421, FrameOp{Flow: IndirectCall}},
		{"beqlr", 0x4d820020, FrameOp{Flow: CondReturn}},
		{"cmpwi r3,7", 0x2c030007, FrameOp{CmpImm: 7}},
		{"std r30,-16(r1)", 0xfbc1fff0, FrameOp{RASlot: SlotStoreCopy, RAOff: -16, Reg: 31, PushCS: true}},
		{"mflr r12", 0x7d8802a6, FrameOp{LR: LRToCopy, Reg: 13}},
		{"ldu r9,8(r31)", 0xe93f0009, FrameOp{Frame: BPWrite, Reg: 10}},
		{"zero word (traceback table)", 0, FrameOp{Flow: Invalid, Pad: true}},
		{"traceback word", 0x01000000, FrameOp{Flow: Invalid, Pad: true}},
	}
	for _, c := range cases {
		b := binary.LittleEndian.AppendUint32(nil, c.w)
		c.want.Len = 4
		if got := (ppc64le{}).Frame(b, 0x1000); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
	code := ppcMem{0x2000: 0x3c4c0002, 0x2004: 0x38426e00, 0x2008: 0x7c0802a6}
	if got := (ppc64le{}).GlobalEntry(code, 0x2008); got != 0x2000 {
		t.Errorf("GlobalEntry(local entry) = %#x, want 0x2000", got)
	}
	if got := (ppc64le{}).GlobalEntry(code, 0x2004); got != 0x2004 {
		t.Errorf("GlobalEntry(no TOC setup before) = %#x, want 0x2004", got)
	}
	// __glink_PLTresolve, then a lazy entry branching to it (b .-12).
	glink := ppcMem{0x3000: 0x7c0802a6, 0x3004: 0x429f0005, 0x3008: 0x7d6802a6, 0x300c: 0x4bfffff4}
	if !(ppc64le{}).LinkerStub(glink, 0x3000) || !(ppc64le{}).LinkerStub(glink, 0x300c) || (ppc64le{}).LinkerStub(glink, 0x3004) {
		t.Error("LinkerStub: the glink resolver or its lazy entry not recognized, or its middle taken")
	}
	// DT_PPC64_GLINK is 32 bytes before the first lazy entry (0x300c);
	// an ELFv1 entry loads r0 (li r0,0) before its branch (b .-16).
	for _, c := range []struct {
		name     string
		mem      ppcMem
		dyn      uint64
		lo, hi   uint64
		resolved bool
	}{
		{"ELFv2", glink, 0x300c - 32, 0x3000, 0x300c, true},
		{"ELFv1", ppcMem{0x3000: 0x7c0802a6, 0x300c: 0x38000000, 0x3010: 0x4bfffff0}, 0x300c - 32, 0x3000, 0x300c, true},
		{"no branch", ppcMem{0x300c: 0x38000000, 0x3010: 0x38000000}, 0x300c - 32, 0, 0, false},
		{"branch forward", ppcMem{0x300c: 0x48000010}, 0x300c - 32, 0, 0, false},
	} {
		lo, hi, ok := (ppc64le{}).GlinkResolver(c.mem, c.dyn)
		if lo != c.lo || hi != c.hi || ok != c.resolved {
			t.Errorf("GlinkResolver %s: %#x-%#x %v, want %#x-%#x %v", c.name, lo, hi, ok, c.lo, c.hi, c.resolved)
		}
	}
	if (ppc64le{}).ClearFP() != nil {
		t.Error("ppc64le has no ClearFP instruction")
	}
}
