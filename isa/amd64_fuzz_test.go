package isa

import (
	"encoding/hex"
	"testing"
)

// FuzzAMD64: the x86-64 decoder, frame scan and readers on any bytes.
func FuzzAMD64(f *testing.F) {
	textSeeds(f, "../testdata/bin/*-O2", 24, 256)
	f.Add([]byte{0xff, 0x24, 0xc5, 0, 0, 0, 0})          // jmp *table(,%rax,8)
	f.Add([]byte{0x66, 0x66, 0x66, 0x66, 0x90})          // prefixes
	f.Add([]byte{0xf3, 0x0f, 0x1e, 0xfa, 0xe8, 0, 0, 0}) // endbr64; truncated call
	if b, err := hex.DecodeString(vtText); err == nil {
		f.Add(b) // the value analysis's tables (amd64_values_test.go)
	}
	fuzzArch(f, amd64{})
}
