//go:build !amd64

package sample

// Only x86-64 register layouts are known.
const (
	userRegsMask = 0
	nUserRegs    = 4
	archOK       = false
)

func userRegs(r [nUserRegs]uint64) (di, bp, sp, ip uint64) { return 0, 0, 0, 0 }
