package sample

// ppc64 perf register numbers (arch/powerpc/include/uapi/asm/perf_regs.h):
// r1 (SP), r31 (the frame pointer where one is set up), NIP (the PC) and
// LINK (the link register). The kernel writes the selected registers in
// ascending number order.
const (
	perfRegR1    = 1
	perfRegR31   = 31
	perfRegNIP   = 32
	perfRegLink  = 36
	userRegsMask = 1<<perfRegR1 | 1<<perfRegR31 | 1<<perfRegNIP | 1<<perfRegLink
	nUserRegs    = 4
	archOK       = true
)

// userRegs sets s's SP, BP, IP and LR from a sample's user register block.
func userRegs(r [nUserRegs]uint64, s *Sample) {
	s.SP, s.BP, s.IP, s.LR, s.HasLR = r[0], r[1], r[2], r[3], true
}
