package unwind

import (
	"bytes"
	"path/filepath"
	"testing"

	"bloop/isa"
	"bloop/loader"
)

// TestClearFPBefore: the search in the instruction's positions answers
// as bytes.Contains over the code before each address, at every address
// of the code of a program and of this machine's libc (when it is
// there), section ends included.
func TestClearFPBefore(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/prof/bin/unwind-gcc12-O2")
	paths = append(paths, "/lib/x86_64-linux-gnu/libc.so.6")
	for _, path := range paths {
		img, err := loader.Open(path, loader.Options{})
		if err != nil {
			t.Logf("%s: %v", path, err)
			continue
		}
		m := NewModule(img)
		pat := isa.For(img.Machine).(isa.Framer).ClearFP()
		found, checked := 0, 0
		for _, s := range img.Sections {
			for a := s.Addr; a <= s.End()+48; a++ {
				if a < 48 {
					continue
				}
				want := bytes.Contains(img.Bytes(a-48, a), pat)
				if got := m.clearFPBefore(a, pat); got != want {
					t.Fatalf("%s: at %#x: %v, bytes.Contains %v", path, a, got, want)
				}
				checked++
				if want {
					found++
				}
			}
		}
		if found == 0 || checked < 1000 {
			t.Errorf("%s: %d of %d addresses after the instruction: nothing tested", path, found, checked)
		}
	}
}
