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

// userRegs picks DI, BP, SP and IP from a sample's user register block
// (the kernel writes them in register number order).
func userRegs(r [nUserRegs]uint64) (di, bp, sp, ip uint64) { return r[0], r[1], r[2], r[3] }
