package dyninst

import (
	"debug/elf"
	"testing"

	"bloop/loader"
)

// TestPolicy: no policy departs in nothing, in the graphs or the loader;
// hpcstruct's holds each instruction set's row of Dyninst 12.3's quirks.
func TestPolicy(t *testing.T) {
	var none *Policy
	if none.CFG(elf.EM_X86_64) != nil {
		t.Error("no policy: a cfg policy")
	}
	if lopt := none.Loader(loader.Options{RawFileNames: true}); lopt.RawFileNames || lopt.DyninstStubs {
		t.Errorf("no policy: loader options %+v", lopt)
	}
	amd := Hpcstruct.CFG(elf.EM_X86_64)
	if amd == nil || !amd.FallOut || !amd.Tables || !amd.TailCalls ||
		amd.Decode.Undecodable == nil || amd.Decode.NoReturnSyscall == nil || amd.Decode.TailMark == nil || amd.Decode.AnyWord {
		t.Errorf("x86-64: %+v", amd)
	}
	if ppc := Hpcstruct.CFG(elf.EM_PPC64); !ppc.Decode.AnyWord || ppc.Decode.TailMark != nil {
		t.Errorf("ppc64: %+v", ppc)
	}
	if gpu := Hpcstruct.CFG(elf.EM_AMDGPU); gpu.Decode.Kind == nil {
		t.Errorf("AMD GPU: %+v", gpu)
	}
	// No decoder: nothing to fall out of.
	if cuda := Hpcstruct.CFG(elf.EM_CUDA); cuda.FallOut {
		t.Errorf("CUDA: %+v", cuda)
	}
	if lopt := Hpcstruct.Loader(loader.Options{}); !lopt.RawFileNames || !lopt.DyninstPLTNames || !lopt.DyninstStubs ||
		!lopt.DyninstLineSites || !lopt.DyninstDeclNames {
		t.Errorf("hpcstruct: loader options %+v", lopt)
	}
}
