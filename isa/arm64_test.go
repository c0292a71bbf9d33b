package isa

import (
	"encoding/binary"
	"testing"
)

// TestDecodeARM64 classifies instruction words, in the style of
// golang.org/x/arch's tables: each word as GNU as 2.40 assembled the text
// beside it (-march=armv8.8-a) at offset off of a section loaded at base.
func TestDecodeARM64(t *testing.T) {
	const base = 0x40000000
	rel := func(off, d int64) uint64 { return uint64(base + off + d) }
	for _, tc := range []struct {
		word   uint32
		off    int64
		asm    string
		kind   Kind
		target uint64
	}{
		{0x14000040, 0x00, "b .+0x100", Jump, rel(0x00, 0x100)},
		{0x17ffffc0, 0x04, "b .-0x100", Jump, rel(0x04, -0x100)},
		{0x94000800, 0x08, "bl .+0x2000", Call, rel(0x08, 0x2000)},
		{0x96000000, 0x0c, "bl .-0x8000000", Call, rel(0x0c, -0x8000000)},
		{0x54000200, 0x10, "b.eq .+0x40", CondJump, rel(0x10, 0x40)},
		{0x54fffe08, 0x14, "b.hi .-0x40", CondJump, rel(0x14, -0x40)},
		{0x5400008e, 0x18, "b.al .+0x10", Jump, rel(0x18, 0x10)},
		{0x54000051, 0x1c, "bc.ne .+8", CondJump, rel(0x1c, 8)},
		{0xb47fffe3, 0x20, "cbz x3, .+0xffffc", CondJump, rel(0x20, 0xffffc)},
		{0x35800009, 0x24, "cbnz w9, .-0x100000", CondJump, rel(0x24, -0x100000)},
		{0x361bffe1, 0x28, "tbz w1, #3, .+0x7ffc", CondJump, rel(0x28, 0x7ffc)},
		{0xb7fc0014, 0x2c, "tbnz x20, #63, .-0x8000", CondJump, rel(0x2c, -0x8000)},
		{0xd61f0220, 0x30, "br x17", IndirectJump, 0},
		{0xd63f0100, 0x34, "blr x8", IndirectCall, 0},
		{0xd65f03c0, 0x38, "ret", Return, 0},
		{0xd65f0020, 0x3c, "ret x1", Return, 0},
		{0xd4207d00, 0x40, "brk #0x3e8", Halt, 0},
		{0xd4400000, 0x44, "hlt #0", Halt, 0},
		{0x00000000, 0x48, "udf #0", Halt, 0},
		{0x0000ffff, 0x4c, "udf #65535", Halt, 0},
		{0xd4000001, 0x50, "svc #0 (returns)", Other, 0},
		{0xd71f0822, 0x54, "braa x1, x2", IndirectJump, 0},
		{0xd61f0c7f, 0x58, "brabz x3", IndirectJump, 0},
		{0xd73f089f, 0x5c, "blraa x4, sp", IndirectCall, 0},
		{0xd63f08bf, 0x60, "blraaz x5", IndirectCall, 0},
		{0xd65f0bff, 0x64, "retaa", Return, 0},
		{0xd65f0fff, 0x68, "retab", Return, 0},
		{0xd69f03e0, 0x6c, "eret", Return, 0},
		{0xd6bf03e0, 0x70, "drps", Return, 0},
		{0xd503201f, 0x74, "nop", Other, 0},
		{0xd503245f, 0x78, "bti c", Other, 0},
		{0xd503233f, 0x7c, "paciasp", Other, 0},
		{0xd50323bf, 0x80, "autiasp", Other, 0},
		// LSE atomics, which arm64asm does not know, continue: libgcc's
		// __aarch64_cas8_relax returns after its cas.
		{0xc8a07c41, 0x84, "cas x0, x1, [x2]", Other, 0},
		{0xb8200041, 0x88, "ldadd w0, w1, [x2]", Other, 0},
		{0x91001020, 0x8c, "add x0, x1, #4", Other, 0},
		{0x94000001, 0x90, "bl .+4", Call, rel(0x90, 4)},
	} {
		b := binary.LittleEndian.AppendUint32(nil, tc.word)
		in := arm64{}.Decode(b, base+uint64(tc.off))
		if in.Kind != tc.kind || in.Target != tc.target || in.Len != 4 {
			t.Errorf("%s (%08x): kind %d target %#x len %d, want kind %d target %#x len 4", tc.asm, tc.word, in.Kind, in.Target, in.Len, tc.kind, tc.target)
		}
	}
	if in := (arm64{}).Decode([]byte{0x1f, 0x20}, base); in.Kind != Invalid || in.Len != 4 {
		t.Errorf("2 bytes: kind %d len %d, want Invalid, 4", in.Kind, in.Len)
	}
}

// TestPLTSlotARM64 reads the GOT slot of PLT entries as binutils 2.40 lays
// them out (ctrl-aarch64-gcc12-O2's .plt), with and without bti c.
func TestPLTSlotARM64(t *testing.T) {
	for _, tc := range []struct {
		name string
		addr uint64
		code []byte
		slot uint64
		ok   bool
	}{
		// adrp x16, 0x20000; ldr x17, [x16]; add x16, x16, #0x0; br x17
		{"exit@plt", 0x740, words(0x90000110, 0xf9400211, 0x91000210, 0xd61f0220), 0x20000, true},
		// adrp x16, 0x20000; ldr x17, [x16, #48]; add x16, x16, #0x30; br x17
		{"strtol@plt", 0x7a0, words(0x90000110, 0xf9401a11, 0x9100c210, 0xd61f0220), 0x20030, true},
		// PLT0: stp x16, x30, [sp, #-16]!; adrp x16, 0x1f000; ldr x17, [x16, #4088]
		{"PLT0", 0x720, words(0xa9bf7bf0, 0xf00000f0, 0xf947fe11, 0x913fe210), 0x1fff8, true},
		// bti c; adrp x16, 0x20000; ldr x17, [x16, #8]; add; br
		{"bti c first", 0x750, words(0xd503245f, 0x90000110, 0xf9400611, 0x91002210, 0xd61f0220), 0x20008, true},
		// adrp x16; ldr x17, [x16, #8] loads through x16, but x0 is read
		{"other registers", 0x750, words(0x90000100, 0xf9400400, 0x91002000, 0xd61f0000), 0, false},
	} {
		slot, ok := arm64{}.PLTSlot(tc.code, tc.addr)
		if slot != tc.slot || ok != tc.ok {
			t.Errorf("%s: slot %#x %v, want %#x %v", tc.name, slot, ok, tc.slot, tc.ok)
		}
	}
}
