package isa

import (
	"debug/elf"
	"os"
	"path/filepath"
	"testing"

	"bloop/internal/testenv"
)

// preSystemBinaries are large x86-64 programs the differential test reads
// when the machine has them (Debian's builds: stripped, and compiled
// with other flags than the corpus).
var preSystemBinaries = []string{
	"/lib/x86_64-linux-gnu/libc.so.6",
	"/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
	"/usr/bin/python3.11",
	"/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus",
}

// TestPreDecoderAMD64 holds the pre-decoder to the full decode: on the
// code of every x86-64 ELF in testdata and the reference corpus, and of
// the system's large programs where present, each instruction of a
// linear sweep (and, in the small files, the bytes at every offset) gets
// the same length and classification from both, wherever the pre-decoder
// answers.
func TestPreDecoderAMD64(t *testing.T) {
	t.Run("testdata", func(t *testing.T) {
		preCompareFiles(t, testenv.Fixtures(t, "../testdata/bin*/*"), true)
	})
	t.Run("shared", func(t *testing.T) {
		bins := testenv.SharedGlob(t, "../../shared/hpcstruct-refs/bin/*")
		arch, _ := filepath.Glob("../../shared/hpcstruct-refs-arch/bin/*")
		preCompareFiles(t, append(bins, arch...), true)
	})
	t.Run("system", func(t *testing.T) {
		var bins []string
		for _, p := range preSystemBinaries {
			if _, err := os.Stat(p); err != nil {
				t.Logf("%s: not on this machine, skipped", p)
				continue
			}
			bins = append(bins, p)
		}
		if len(bins) == 0 {
			t.Skip("none of the system's programs installed")
		}
		preCompareFiles(t, bins, false)
	})
}

// preCompareFiles runs preCompare on the code sections of the x86-64
// ELF files among paths.
func preCompareFiles(t *testing.T, paths []string, every bool) {
	var insts, fast, files int
	for _, p := range paths {
		f, err := elf.Open(p)
		if err != nil {
			continue // the glob's scripts, sources and notes
		}
		if f.Machine != elf.EM_X86_64 {
			f.Close()
			continue
		}
		files++
		for _, s := range f.Sections {
			if s.Type != elf.SHT_PROGBITS || s.Flags&elf.SHF_EXECINSTR == 0 {
				continue
			}
			b, err := s.Data()
			if err != nil {
				t.Fatalf("%s %s: %v", p, s.Name, err)
			}
			n, nf := preCompare(t, p, s.Addr, b, every)
			insts, fast = insts+n, fast+nf
		}
		f.Close()
		if t.Failed() {
			return
		}
	}
	if files == 0 {
		t.Fatal("no x86-64 binaries")
	}
	t.Logf("%d files, %d instructions, %.1f%% pre-decoded", files, insts, 100*float64(fast)/float64(max(insts, 1)))
}

// preCompare compares the two decodes on code b at addr: at each
// instruction of a linear sweep, or at every offset (every). It returns
// how many instructions the sweep met and how many the pre-decoder read.
func preCompare(t *testing.T, file string, addr uint64, b []byte, every bool) (insts, fast int) {
	t.Helper()
	next := 0
	for o := 0; o < len(b); o++ {
		boundary := o == next
		if !boundary && !every {
			o = next - 1
			continue
		}
		w := b[o:min(o+15, len(b))]
		full := frameAMD64(w, addr+uint64(o))
		pre, ok := preFrameAMD64(w, addr+uint64(o))
		if ok && pre != full {
			t.Errorf("%s %#x % x:\npre  %+v\nfull %+v", file, addr+uint64(o), w, pre, full)
			if t.Failed() && every {
				return
			}
		}
		if boundary {
			insts++
			if ok {
				fast++
			}
			next = o + int(full.Len)
		}
	}
	return insts, fast
}

// FuzzPreDecoderAMD64: on any bytes, the pre-decoder answers as the
// full decode does, or declines.
func FuzzPreDecoderAMD64(f *testing.F) {
	textSeeds(f, "../testdata/bin/*-O2", 24, 64)
	f.Add([]byte{0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0})
	f.Add([]byte{0x48, 0x83, 0xec, 0x40})
	f.Add([]byte{0x41, 0x5c})
	f.Fuzz(func(t *testing.T, b []byte) {
		b = b[:min(len(b), 15)]
		pre, ok := preFrameAMD64(b, fuzzBase)
		if !ok {
			return
		}
		if full := frameAMD64(b, fuzzBase); pre != full {
			t.Errorf("% x:\npre  %+v\nfull %+v", b, pre, full)
		}
		if d := (amd64{}).Decode(b, fuzzBase); d.Len != int(pre.Len) || d.Kind != pre.Flow || d.Target != pre.Target {
			t.Errorf("% x: Decode %+v, Frame %+v", b, d, pre)
		}
	})
}
