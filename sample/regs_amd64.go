package sample

// x86-64 perf register numbers (arch/x86/include/uapi/asm/perf_regs.h).
// The kernel writes the selected registers in ascending number order.
const (
	perfRegBP    = 6
	perfRegSP    = 7
	perfRegIP    = 8
	userRegsMask = 1<<perfRegBP | 1<<perfRegSP | 1<<perfRegIP
	nUserRegs    = 3
	archOK       = true
)

// userRegs picks BP, SP and IP from a sample's user register block.
func userRegs(r [nUserRegs]uint64) (bp, sp, ip uint64) { return r[0], r[1], r[2] }
