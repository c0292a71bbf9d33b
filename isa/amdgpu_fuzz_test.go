package isa

import "testing"

// FuzzAMDGPU: the AMD GPU decoder and readers on any bytes, seeded with
// the code of the gfx908 and gfx90a code objects.
func FuzzAMDGPU(f *testing.F) {
	textSeeds(f, "../../shared/hpcstruct-amdgpu/bin/*-O[02]", 24, 256)
	f.Add([]byte{0xff, 0x00, 0x80, 0xbe})       // s_mov_b32 with its literal cut off
	f.Add([]byte{0xf9, 0x02, 0x02, 0x7e, 0x00}) // v_mov_b32_sdwa cut short
	f.Add([]byte{0xfc, 0xff, 0x84, 0xbf})       // s_cbranch_scc0 back
	fuzzArch(f, amdgpu{})
}
