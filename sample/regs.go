package sample

import (
	"math/bits"
	"runtime"
)

// hostArch is perf's name of this machine (perfRegs): its recordings'
// registers are numbered as a perf.data file of it says.
var hostArch = map[string]string{"amd64": "x86_64", "arm64": "aarch64", "ppc64le": "ppc64le"}[runtime.GOARCH]

// hostRegs are the numbers of the registers the recorder asks for;
// archOK: this machine's are known.
var hostRegs, archOK = perfRegs[hostArch]

// userRegsMask selects the registers the recorder asks the kernel for,
// which writes them in ascending number order, nUserRegs of them.
var (
	userRegsMask = func() uint64 {
		if !archOK {
			return 0
		}
		return hostRegs.mask()
	}()
	nUserRegs = bits.OnesCount64(userRegsMask)
)
