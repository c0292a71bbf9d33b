package isa

import "testing"

// FuzzARM64: the AArch64 decoder and readers on any bytes.
func FuzzARM64(f *testing.F) {
	textSeeds(f, "../testdata/bin-arm64/*-O2", 24, 256)
	f.Add([]byte{0x00, 0x00, 0x1f, 0xd6, 0xc0}) // br x0; a short tail
	fuzzArch(f, arm64{})
}
