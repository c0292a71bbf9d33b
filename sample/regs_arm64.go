package sample

// aarch64 perf register numbers (arch/arm64/include/uapi/asm/perf_regs.h):
// x29 (the frame pointer), x30 (the link register), SP and PC. The kernel
// writes the selected registers in ascending number order.
const (
	perfRegFP    = 29
	perfRegLR    = 30
	perfRegSP    = 31
	perfRegPC    = 32
	userRegsMask = 1<<perfRegFP | 1<<perfRegLR | 1<<perfRegSP | 1<<perfRegPC
	nUserRegs    = 4
	archOK       = true
)

// userRegs sets s's BP, LR, SP and IP from a sample's user register block.
func userRegs(r [nUserRegs]uint64, s *Sample) {
	s.BP, s.LR, s.SP, s.IP, s.HasLR = r[0], r[1], r[2], r[3], true
}
