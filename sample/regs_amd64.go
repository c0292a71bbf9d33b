package sample

// x86-64 perf register numbers (arch/x86/include/uapi/asm/perf_regs.h).
// The kernel writes the selected registers in ascending number order.
const (
	perfRegDI    = 5
	perfRegBP    = 6
	perfRegSP    = 7
	perfRegIP    = 8
	userRegsMask = 1<<perfRegDI | 1<<perfRegBP | 1<<perfRegSP | 1<<perfRegIP
	nUserRegs    = 4
	archOK       = true
)

// userRegs sets s's DI, BP, SP and IP from a sample's user register
// block (the kernel writes them in register number order).
func userRegs(r [nUserRegs]uint64, s *Sample) {
	s.DI, s.BP, s.SP, s.IP, s.HasDI = r[0], r[1], r[2], r[3], true
}
