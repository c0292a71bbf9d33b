package isa

import (
	"debug/elf"
	"testing"
)

// FuzzPPC64LE: the ppc64le decoder and readers on any bytes, bound to a
// TOC base as modules are.
func FuzzPPC64LE(f *testing.F) {
	textSeeds(f, "../testdata/bin-ppc64le/*-O2", 24, 256)
	f.Add([]byte{0x20, 0x04, 0x80, 0x4e, 0x01}) // bctr; a short tail
	fuzzArch(f, ForTOC(elf.EM_PPC64, fuzzBase+0x108000))
}
