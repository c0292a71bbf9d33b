// Package amd64asm is the x86-64 decoder every package of bloop uses:
// golang.org/x/arch's x86asm in 64-bit mode, with the answers it gets
// wrong put right in one place.
package amd64asm

import "golang.org/x/arch/x86/x86asm"

// Decode decodes the instruction at the start of b.
func Decode(b []byte) (x86asm.Inst, error) {
	x, err := x86asm.Decode(b, 64)
	if err == nil && (x.Op == x86asm.VZEROUPPER || x.Op == x86asm.VZEROALL) {
		// x86asm counts one byte too many for both VEX forms (c5 f8 77 is
		// 3 bytes, c4 e1 78 77 is 4), and the instruction after it (often
		// the procedure's ret) disappears into it.
		x.Len = 3
		if len(b) > 0 && b[0] == 0xc4 {
			x.Len = 4
		}
	}
	return x, err
}
