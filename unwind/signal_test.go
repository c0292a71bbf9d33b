package unwind

import (
	"errors"
	"testing"
)

func TestIsSigreturn(t *testing.T) {
	for _, tc := range []struct {
		code []byte
		want bool
	}{
		{[]byte{0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05, 0x90}, true},
		{[]byte{0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f}, false},       // cut short
		{[]byte{0x48, 0xc7, 0xc0, 0x3c, 0, 0, 0, 0x0f, 0x05}, false}, // exit, not rt_sigreturn
		{[]byte{0xb8, 0x0f, 0, 0, 0, 0x0f, 0x05, 0x90, 0x90}, false}, // another spelling: not glibc's
		{nil, false},
	} {
		if got := IsSigreturn(tc.code); got != tc.want {
			t.Errorf("% x: %v, want %v", tc.code, got, tc.want)
		}
	}
}

// TestSignalFrame reads the interrupted registers from a hand-built
// rt_sigframe: ucontext at SP, mcontext 40 bytes in, rbp, rsp and rip
// its 11th, 16th and 17th registers.
func TestSignalFrame(t *testing.T) {
	const sp = 0x7ffc0000
	words := map[uint64]uint64{
		sp + 40 + 10*8: 0x1111, // rbp
		sp + 40 + 15*8: 0x2222, // rsp
		sp + 40 + 16*8: 0x3333, // rip
		sp + 40 + 11*8: 0x4444, // rbx: not read
	}
	mem := func(a uint64) (uint64, bool) { v, ok := words[a]; return v, ok }
	f, err := SignalFrame(sp, mem)
	if err != nil || f != (Frame{PC: 0x3333, SP: 0x2222, BP: 0x1111}) {
		t.Errorf("%+v %v", f, err)
	}
	delete(words, sp+40+16*8)
	if _, err := SignalFrame(sp, mem); !errors.Is(err, ErrTruncated) {
		t.Errorf("frame beyond the copy: %v", err)
	}
	words[sp+40+16*8] = 0
	if _, err := SignalFrame(sp, mem); !errors.Is(err, ErrBadFrame) {
		t.Errorf("saved rip 0: %v", err)
	}
}
