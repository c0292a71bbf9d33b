package pipeline

import (
	"fmt"

	"bloop/isa"
	"bloop/loader"
)

// GPU code (cubins) gets a control-flow graph where its generation's
// instructions decode (isa.ForGeneration): in the default mode always, as
// every architecture does, and in compat mode only with Options.GPUCFG,
// as hpcstruct builds one only with --gpucfg yes. The graph is the one
// hpcstruct reads from nvdisasm: the code reachable from the entry by
// branches, the reconvergence jumps and the cubin's indirect-branch
// tables, with no tail calls and no calls that do not return; each
// call to a procedure's entry is a call site (C), and the module says
// has-calls="1".

// gpuArch is the instruction set img's graphs are built with under opt:
// its generation's SASS bound to its code, nil when img is no cubin, when
// the mode builds no graph of GPU code, or for a generation bloop does not
// decode.
func gpuArch(img *loader.Image, opt Options) isa.Arch {
	if !buildsGPU(img, opt) {
		return nil
	}
	procs := make([][2]uint64, 0, len(img.Funcs))
	for _, fn := range img.Funcs {
		procs = append(procs, [2]uint64{fn.Addr, fn.End})
	}
	return isa.BindCUDA(img.SM, isa.CUDACode{Mem: img, Procs: procs, Tables: img.IndirectTargets, Calls: img.CallTargets})
}

// HasCalls reports whether img's structure under opt has call sites: a
// cubin whose control flow is analysed, placed by the DWARF engine (or
// the hybrid, as compat mode always does; the thesis engine writes calls
// as statements). hpcstruct's has-calls="1".
func HasCalls(img *loader.Image, opt Options) bool {
	return analysesGPU(img, opt) && engineFor(img, opt) != Heuristic
}

// buildsGPU reports whether img is a cubin whose graphs opt would build:
// in the default mode, or in compat mode with GPUCFG.
func buildsGPU(img *loader.Image, opt Options) bool {
	return img.Arch == loader.CUDA && (opt.Dyninst == nil || opt.GPUCFG)
}

// analysesGPU reports whether img is a cubin whose control flow opt
// analyses: one whose graphs it builds, of a generation bloop decodes.
func analysesGPU(img *loader.Image, opt Options) bool {
	return buildsGPU(img, opt) && isa.ForGeneration(img.Machine, img.SM) != nil
}

// NoControlFlow reports whether img's code goes without the control-flow
// analysis (so without loops) that opt would give it: bloop has no decoder
// for its instruction set or generation. A cubin in compat mode without
// GPUCFG needs none, as hpcstruct makes none.
func NoControlFlow(img *loader.Image, opt Options) bool {
	if img.Arch == loader.CUDA {
		return buildsGPU(img, opt) && !analysesGPU(img, opt)
	}
	return isa.For(img.Machine) == nil
}

// gpuDevice is the device hpcstruct names in its call sites.
func gpuDevice(img *loader.Image) string { return fmt.Sprintf("NVIDIA sm_%d", img.SM) }
