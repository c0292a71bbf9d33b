//go:build !amd64 && !arm64 && !ppc64le

package sample

// Only the x86-64, aarch64 and ppc64le register layouts are known.
const (
	userRegsMask = 0
	nUserRegs    = 4
	archOK       = false
)

func userRegs(r [nUserRegs]uint64, s *Sample) {}
