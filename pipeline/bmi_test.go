package pipeline

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"bloop/dyninst"
	"bloop/internal/testenv"
	"bloop/isa"
	"bloop/loader"
	"bloop/structure"
)

// bmiSource has zstd's kind of bit reader: variable shifts of 64- and
// 32-bit values and a mask of the low n bits, in loops, which gcc and
// clang write with shlx, shrx, sarx and bzhi under -mbmi2.
const bmiSource = `#include <stdint.h>
#include <stddef.h>
uint64_t read64(const uint64_t *in, size_t n, const unsigned char *nb) {
	uint64_t acc = 0, bits = 0;
	for (size_t i = 0; i < n; i++) {
		bits = (bits << nb[i]) | (in[i] >> (64 - nb[i]));
		acc += bits & ((1ULL << nb[i]) - 1);
	}
	return acc;
}
uint32_t read32(const uint32_t *in, size_t n, const unsigned char *nb) {
	uint32_t acc = 0;
	for (size_t i = 0; i < n; i++)
		acc ^= (in[i] << nb[i]) + ((int32_t)in[i] >> nb[i]);
	return acc;
}
int main(int argc, char **argv) {
	uint64_t a[4] = {1, 2, 3, (uint64_t)argc};
	uint32_t b[4] = {1, 2, 3, (uint32_t)argc};
	unsigned char nb[4] = {1, 2, 3, 4};
	(void)argv;
	return (int)(read64(a, 4, nb) + read32(b, 4, nb));
}
`

// bmiOp names the BMI instruction b starts with ("" for any other): the
// VEX rows of map 0F38 F2-F7 and of 0F3A F0.
func bmiOp(b []byte) string {
	if len(b) < 4 || b[0] != 0xc4 {
		return ""
	}
	mmap, pp, op := b[1]&0x1f, b[2]&3, b[3]
	names := map[[3]byte]string{
		{2, 0, 0xf2}: "andn", {2, 0, 0xf5}: "bzhi", {2, 2, 0xf5}: "pext", {2, 3, 0xf5}: "pdep",
		{2, 3, 0xf6}: "mulx", {2, 0, 0xf7}: "bextr", {2, 1, 0xf7}: "shlx", {2, 2, 0xf7}: "sarx",
		{2, 3, 0xf7}: "shrx", {3, 3, 0xf0}: "rorx",
	}
	if n, ok := names[[3]byte{mmap, pp, op}]; ok && b[2]&0x80 != 0 {
		return n + "q"
	} else if ok {
		return n + "l"
	}
	return ""
}

// TestCompatBMI: Dyninst 12.3 decodes the BMI instructions
// (isa.TestDyninst12DecodesBMI), so in compat mode each one that gcc and
// clang write in a loop of bmiSource (the default mode's) stays in the
// loop: its block goes on after it. (Were it undecodable, the block would
// end before it and the loop lose it and what follows.)
func TestCompatBMI(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bmi.c"), []byte(bmiSource), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cc   string
		want []string // instructions the compiler writes in the loops, at least
	}{
		{"gcc", []string{"shlxq", "shrxq", "shlxl", "sarxl"}},
		{"clang", []string{"bzhiq", "shlxl", "sarxl"}},
	} {
		t.Run(tc.cc, func(t *testing.T) {
			testenv.Need(t, tc.cc)
			bin := buildIn(t, dir, tc.cc, []string{"-O2", "-g", "-mbmi2"}, "bmi.c", "bmi-"+tc.cc)
			inLoop := map[string]int{}           // in compat mode, by instruction
			loopedByDefault := map[uint64]bool{} // in the default mode
			for _, compat := range []bool{false, true} {
				opt := Options{Workers: 1}
				if compat {
					opt.Dyninst = dyninst.Hpcstruct
				}
				img, err := Open(bin, loader.Options{}, opt)
				if err != nil {
					t.Fatal(err)
				}
				doc, err := structure.Parse(bytes.NewReader(structureWith(t, bin, opt, nil)), bin)
				if err != nil {
					t.Fatal(err)
				}
				for _, name := range []string{"read64", "read32"} {
					f := funcNamed(t, img, name)
					loops := loopRanges(doc.Root, name)
					ar := isa.For(img.Machine)
					for a := f.Addr; a < f.End; {
						in := ar.Decode(img.Bytes(a, f.End), a)
						if in.Len <= 0 {
							t.Fatalf("%s: no instruction at %#x", name, a)
						}
						if op := bmiOp(img.Bytes(a, in.End())); op != "" {
							switch looped := covers(loops, a); {
							case !compat:
								loopedByDefault[a] = looped
							case looped:
								inLoop[op]++
							case loopedByDefault[a]:
								t.Errorf("compat: %s at %#x of %s is in no loop", op, a, name)
							}
						}
						a = in.End()
					}
				}
			}
			for _, op := range tc.want {
				if inLoop[op] == 0 {
					t.Errorf("no %s in a loop (found %v)", op, inLoop)
				}
			}
		})
	}
}

// loopRanges lists the address ranges of the statements inside the loops
// of procedure proc (its link name, or its name where it has none).
func loopRanges(root *structure.Node, proc string) []structure.Range {
	var out []structure.Range
	var walk func(n *structure.Node, inLoop bool)
	walk = func(n *structure.Node, inLoop bool) {
		for _, c := range n.Children {
			if c.Tag == "S" && inLoop {
				rs, _ := structure.ParseRanges(c.Value("v"))
				out = append(out, rs...)
			}
			walk(c, inLoop || c.Tag == "L")
		}
	}
	for _, p := range findAll(root, "P") {
		if ln, ok := p.Get("ln"); ok && ln == proc || !ok && p.Value("n") == proc {
			walk(p, false)
		}
	}
	return out
}

// covers reports whether a lies in one of rs.
func covers(rs []structure.Range, a uint64) bool {
	for _, r := range rs {
		if r.Lo <= a && a < r.Hi {
			return true
		}
	}
	return false
}

// TestCompatZstdBMI: in compat mode the parse goes on after every BMI
// instruction of the bit readers of Debian's libzstd (and of the zstd
// that libgraphblas embeds, when installed; big, so not asked for in
// CI): no statement range of a procedure ends, after an instruction that
// falls through, right before one. It logs the loops of the procedures
// that hold them, the figures docs/compat.md compares with live
// hpcstruct's.
func TestCompatZstdBMI(t *testing.T) {
	libs := []string{testenv.NeedFile(t, "/usr/lib/x86_64-linux-gnu/libzstd.so.1", "libzstd1")}
	if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/libgraphblas.so.7"); err == nil && !testing.Short() {
		libs = append(libs, "/usr/lib/x86_64-linux-gnu/libgraphblas.so.7")
	}
	for _, lib := range libs {
		opt := Options{Workers: 2, Dyninst: dyninst.Hpcstruct}
		img, err := Open(lib, loader.Options{Workers: 2}, opt)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := structure.Parse(bytes.NewReader(structureWith(t, lib, opt, nil)), lib)
		if err != nil {
			t.Fatal(err)
		}
		ar := isa.For(img.Machine)
		total := 0
		for _, p := range findAll(doc.Root, "P") {
			var rs []structure.Range
			for _, s := range findAll(p, "S") {
				r, _ := structure.ParseRanges(s.Value("v"))
				rs = append(rs, r...)
			}
			n := 0
			for _, r := range structure.MergeRanges(rs) {
				var last isa.Inst
				for a := r.Lo; a < r.Hi; a = last.End() {
					if last = ar.Decode(img.Bytes(a, r.Hi), a); last.Len <= 0 {
						break
					}
					if bmiOp(img.Bytes(a, last.End())) != "" {
						n++
					}
				}
				switch last.Kind {
				case isa.Jump, isa.IndirectJump, isa.Return, isa.Halt, isa.Invalid:
					continue
				}
				if op := bmiOp(img.Bytes(r.Hi, r.Hi+16)); op != "" {
					t.Errorf("%s: %s: the parse stops at %s at %#x", lib, p.Value("n"), op, r.Hi)
				}
			}
			if n > 0 {
				total += n
				t.Logf("%s: %s: %d loops, %d BMI instructions", filepath.Base(lib), p.Value("n"), len(findAll(p, "L")), n)
			}
		}
		if total == 0 {
			t.Errorf("%s: no BMI instruction parsed", lib)
		}
	}
}
