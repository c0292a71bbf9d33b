package unwind

import "bytes"

// sigreturnAMD64 is the x86-64 Linux signal return trampoline that glibc
// installs as every handler's return address (__restore_rt, SA_RESTORER):
// mov $15, %rax (rt_sigreturn); syscall. musl's is the same code.
var sigreturnAMD64 = []byte{0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05}

// IsSigreturn reports whether code starts with the signal return
// trampoline: a return address there is not after a call but the entry
// to the kernel's signal frame.
func IsSigreturn(code []byte) bool { return bytes.HasPrefix(code, sigreturnAMD64) }

// SigreturnLen is how many code bytes IsSigreturn needs.
const SigreturnLen = 9

// Where the kernel saves the interrupted context on x86-64: the
// handler returns into the trampoline with SP at its rt_sigframe's
// ucontext (the return address, pretcode, was just below it); the
// machine context follows uc_flags, uc_link and uc_stack (40 bytes), its
// general registers in the order r8..r15, rdi, rsi, rbp, rbx, rdx, rax,
// rcx, rsp, rip.
const (
	ucMcontext = 40
	mcBP       = ucMcontext + 10*8
	mcSP       = ucMcontext + 15*8
	mcIP       = ucMcontext + 16*8
)

// SignalFrame returns the frame a signal interrupted, saved in the signal
// frame whose ucontext is at sp (the trampoline frame's SP). Its PC is
// the interrupted instruction itself, not a return address.
func SignalFrame(sp uint64, mem Memory) (Frame, error) {
	var f Frame
	for _, r := range []struct {
		off uint64
		v   *uint64
	}{{mcIP, &f.PC}, {mcSP, &f.SP}, {mcBP, &f.BP}} {
		v, ok := mem(sp + r.off)
		if !ok {
			return Frame{}, ErrTruncated
		}
		*r.v = v
	}
	if f.SP == 0 || f.PC == 0 {
		return Frame{}, ErrBadFrame
	}
	return f, nil
}
