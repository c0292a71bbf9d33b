package unwind

import (
	"testing"

	"bloop/loader"
)

// TestAboutToStart: a sample taken in the outermost frame's last steps
// (clone3's: the frame pointer cleared, the indirect call to the thread's
// function ahead) has no caller to unwind to, so it is complete; a sample
// before the frame pointer is cleared is not.
func TestAboutToStart(t *testing.T) {
	const base = 0x1000
	code := make([]byte, 64) // nops before: the code is looked at 48 bytes back
	for i := range code {
		code[i] = 0x90
	}
	body := []byte{
		0x31, 0xed, // xor ebp,ebp                      base+64
		0x48, 0x83, 0xe4, 0xf0, // and rsp,-16          base+66
		0x4c, 0x89, 0xc7, // mov rdi,r8                 base+70
		0xff, 0xd2, // call *rdx                        base+73
		0x48, 0x89, 0xc7, // mov rdi,rax                base+75
		0xf4, // hlt
	}
	code = append(code, body...)
	img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: base, Data: code}}, nil)
	m := NewModule(img)
	m.Name = "libx.so"
	for _, tc := range []struct {
		addr uint64
		want bool
	}{
		{base + 62, false}, // before xor ebp,ebp: rbp still the caller's
		{base + 66, true},
		{base + 70, true},
		{base + 73, true},  // at the call itself
		{base + 75, false}, // after it: the thread function returned here
	} {
		if got := aboutToStart(m, tc.addr); got != tc.want {
			t.Errorf("%#x: %v, want %v", tc.addr, got, tc.want)
		}
	}
}
