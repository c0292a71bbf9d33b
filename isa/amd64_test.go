package isa

import "testing"

// TestSystemInstructions covers the instructions x86asm does not know or
// measures wrongly. The vzeroupper rows are the regression of cfg.Build
// making c5 f8 77 c3 one 4-byte instruction that swallowed the ret.
func TestDecodeAMD64(t *testing.T) {
	for _, tc := range []struct {
		name string
		code []byte
		want Kind
		len  int
	}{
		{"vmmcall", []byte{0x0f, 0x01, 0xd9, 0xc3}, Other, 3},
		{"vmcall", []byte{0x0f, 0x01, 0xc1, 0xc3}, Other, 3},
		{"rdseed %edx", []byte{0x0f, 0xc7, 0xfa, 0x89, 0x10}, Other, 3},
		{"rdseed %rdx", []byte{0x48, 0x0f, 0xc7, 0xfa}, Other, 4},
		{"tpause %edi", []byte{0x66, 0x0f, 0xae, 0xf7}, Other, 4},
		{"cmpxchg8b (mod 00) is x86asm's", []byte{0x0f, 0xc7, 0x0f}, Other, 3},
		// x86asm counts vzeroupper one byte long and swallowed the ret after it.
		{"vzeroupper (2-byte VEX)", []byte{0xc5, 0xf8, 0x77, 0xc3}, Other, 3},
		{"vzeroupper (3-byte VEX)", []byte{0xc4, 0xe1, 0x78, 0x77, 0xc3}, Other, 4},
		{"vzeroall", []byte{0xc5, 0xfc, 0x77, 0xc3}, Other, 3},
		{"endbr64", []byte{0xf3, 0x0f, 0x1e, 0xfa}, Other, 4},
		{"FMA4 vfmaddps (unknown VEX)", []byte{0xc4, 0xe3, 0xf1, 0x68, 0xc2, 0x30}, Other, 6},
		{"ret", []byte{0xc3}, Return, 1},
		{"call rel32", []byte{0xe8, 0, 0, 0, 0}, Call, 5},
		{"call *%rax", []byte{0xff, 0xd0}, IndirectCall, 2},
		{"jmp *%rax", []byte{0xff, 0xe0}, IndirectJump, 2},
		{"jne", []byte{0x75, 0x02}, CondJump, 2},
		{"int3", []byte{0xcc}, Halt, 1},
		{"int $0x80 returns", []byte{0xcd, 0x80}, Other, 2},
		{"ud2", []byte{0x0f, 0x0b}, Halt, 2},
		{"garbage stays invalid", []byte{0x06}, Invalid, 1},
	} {
		in := amd64{}.Decode(tc.code, 0x1000)
		if in.Kind != tc.want || in.Len != tc.len {
			t.Errorf("%s: kind %d len %d, want kind %d len %d", tc.name, in.Kind, in.Len, tc.want, tc.len)
		}
	}
}
