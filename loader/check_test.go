package loader

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck checks that Check refuses from the headers what Open refuses,
// and passes real binaries of every architecture.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	real, err := os.ReadFile("../testdata/bin/loops-gcc12-O2")
	if err != nil {
		t.Fatal(err)
	}
	// A 10 GB sparse file that only starts with the magic: refused
	// without reading it (class 0).
	sparse := write("sparse", []byte("\x7fELF"))
	if err := os.Truncate(sparse, 10<<30); err != nil {
		t.Skip("no sparse files here:", err)
	}
	beyond := append([]byte(nil), real...)
	ef, err := elf.NewFile(bytes.NewReader(real))
	if err != nil {
		t.Fatal(err)
	}
	shoff := binary.LittleEndian.Uint64(real[0x28:])
	for i, s := range ef.Sections {
		if s.Name == ".text" {
			binary.LittleEndian.PutUint64(beyond[shoff+uint64(i)*64+24:], uint64(len(real))+4096) // sh_offset
		}
	}
	rel := append([]byte(nil), real...)
	rel[16] = 1 // ET_REL
	for _, tc := range []struct {
		name, path, want string
	}{
		{"ok amd64", "../testdata/bin/loops-gcc12-O2", ""},
		{"ok arm64", "../testdata/bin-arm64/loops-gcc12-O2", ""},
		{"ok ppc64le", "../testdata/bin-ppc64le/loops-gcc12-O2", ""},
		{"text", write("text", []byte("#!/bin/sh\n")), "not an ELF file"},
		{"empty", write("empty", nil), "not an ELF file"},
		{"sparse", sparse, "unsupported ELF"},
		{"truncated", write("truncated", real[:len(real)/3]), "bad ELF"},
		{"text beyond the end", write("beyond", beyond), ".text claims"},
		{"relocatable", write("rel", rel), "unsupported ELF type"},
		{"directory", dir, "is a directory"},
		{"missing", filepath.Join(dir, "nope"), "cannot read"},
	} {
		err := Check(tc.path)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		case tc.want != "" && !strings.Contains(err.Error(), tc.path):
			t.Errorf("%s: %v does not name the file", tc.name, err)
		}
		// What Check refuses, Open refuses too.
		if err != nil {
			if _, oerr := Open(tc.path, Options{}); oerr == nil {
				t.Errorf("%s: Check refuses (%v), Open accepts", tc.name, err)
			}
		}
	}
}
