package loader

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// AMD GPU code objects (EM_AMDGPU) are ordinary linked ELF shared objects:
// kernels are STT_FUNC symbols in .text, each with a kernel descriptor,
// an STT_OBJECT named <kernel>.kd in .rodata (data the dispatcher reads,
// which readFuncs leaves out as it leaves out every object), and DWARF 5
// with AMD's extensions (address spaces, DW_OP_LLVM_* in locations), which
// the reader skips where it skips any attribute it does not use. What
// differs from a CPU image is only the instruction set, named by e_flags.

// AMDGPU is the instruction-set family of AMD's GPU code objects; an image
// read from a file has its processor instead (amdgpuTarget), so that every
// message names gfx90a or gfx908.
const AMDGPU Arch = "amdgpu"

// IsAMDGPU reports whether a is AMD GPU code: the family or a processor.
func (a Arch) IsAMDGPU() bool {
	return a == AMDGPU || strings.HasPrefix(string(a), "gfx")
}

// e_flags' processor field (EF_AMDGPU_MACH, AMDGPU ELF ABI).
const efAMDGPUMach = 0xff

// amdgpuMachs names the processors whose code bloop decodes: the GFX9
// encodings of Vega and CDNA 1 and 2, by their EF_AMDGPU_MACH value (the
// AMDGPU ELF ABI's table). The other families encode instructions
// otherwise (GFX10 and later: literals in VOP3, other SOPP opcodes), and
// CDNA 3 (gfx94x) is not checked against an oracle here.
var amdgpuMachs = map[uint32]string{
	0x02c: "gfx900", 0x02d: "gfx902", 0x02e: "gfx904", 0x02f: "gfx906",
	0x030: "gfx908", 0x031: "gfx909", 0x032: "gfx90c", 0x03f: "gfx90a",
}

// amdgpuTarget is the processor the code object's e_flags name (hdr is
// its ELF header), or an error naming the value for one bloop does not
// decode.
func amdgpuTarget(hdr []byte) (Arch, error) {
	if len(hdr) < ehFlags+4 {
		return "", fmt.Errorf("truncated ELF header (%d bytes)", len(hdr))
	}
	mach := binary.LittleEndian.Uint32(hdr[ehFlags:]) & efAMDGPUMach
	if name, ok := amdgpuMachs[mach]; ok {
		return Arch(name), nil
	}
	return "", fmt.Errorf("unsupported AMD GPU processor (EF_AMDGPU_MACH %#x): bloop decodes gfx900 to gfx90c and gfx90a (GFX9: Vega, CDNA 1 and 2)", mach)
}
