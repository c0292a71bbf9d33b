package amd64asm

import (
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

func TestDecodeLengths(t *testing.T) {
	for _, tc := range []struct {
		name string
		code []byte
		op   x86asm.Op
		len  int
	}{
		{"vzeroupper, 2-byte VEX", []byte{0xc5, 0xf8, 0x77, 0xc3}, x86asm.VZEROUPPER, 3},
		{"vzeroupper, 3-byte VEX", []byte{0xc4, 0xe1, 0x78, 0x77, 0xc3}, x86asm.VZEROUPPER, 4},
		{"vzeroall", []byte{0xc5, 0xfc, 0x77, 0xc3}, x86asm.VZEROALL, 3},
		{"ret", []byte{0xc3}, x86asm.RET, 1},
		{"mov", []byte{0x48, 0x89, 0xe5}, x86asm.MOV, 3},
	} {
		x, err := Decode(tc.code)
		if err != nil || x.Op != tc.op || x.Len != tc.len {
			t.Errorf("%s: %v len %d (%v), want %v len %d", tc.name, x.Op, x.Len, err, tc.op, tc.len)
		}
	}
}
