package pipeline

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/testenv"
)

// TestCompatAbsolutePath builds programs of its own with clang 14 -g
// (DWARF 5) twice, naming the source by a relative path (as the corpus
// does) and by an absolute one (as CMake does), with and without
// -fdebug-prefix-map, C and C++ for x86-64 and aarch64 and an OpenCL
// kernel for gfx90a, -O2 and -O3, and requires compat mode's
// structure files of the two to be the same but for the binaries' names.
// hpcstruct 2023.08.1 writes f="Unknown file" for the call sites in the
// primary source file both ways (issue 40); clang 14 points them at entry
// 0 of the file table in the one build and at entry 1, the primary file
// again, in the other (loader.Subprogram.DyninstCallSite). A call site in
// the header keeps its file.
func TestCompatAbsolutePath(t *testing.T) {
	src := testenv.Fixture(t, "testdata/abspath")
	clang := testenv.NeedAny(t, "clang-14", "clang")
	clangxx := testenv.NeedAny(t, "clang++-14", "clang++")
	cases := []struct {
		name, cc, file string
		args           []string
		need           []string // the cross gcc whose headers and libraries --target uses, the linker of a code object (any of)
		headerCall     bool     // the program inlines a header's call
	}{
		{"x86-64", clang, "calls.c", nil, nil, true},
		{"x86-64", clangxx, "calls.cpp", nil, nil, true},
		{"aarch64", clang, "calls.c", []string{"--target=aarch64-linux-gnu"}, []string{"aarch64-linux-gnu-gcc"}, true},
		{"aarch64", clangxx, "calls.cpp", []string{"--target=aarch64-linux-gnu"}, []string{"aarch64-linux-gnu-g++"}, true},
		// clang 14 links a gfx90a code object with ld.lld (Debian's
		// lld-14 installs it beside clang-14, and as ld.lld-14).
		{"gfx90a", clang, "kernel.cl", []string{"-x", "cl", "-cl-std=CL2.0", "-nogpulib", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx90a"}, []string{"ld.lld-14", "ld.lld"}, false},
	}
	for _, c := range cases {
		for _, opt := range []string{"-O2", "-O3"} {
			for _, mapped := range []bool{false, true} {
				name := c.name + "/" + c.file + opt
				if mapped {
					name += "-prefix-map"
				}
				t.Run(name, func(t *testing.T) {
					if c.need != nil {
						testenv.NeedAny(t, c.need...)
					}
					t.Parallel()
					dir := t.TempDir()
					for _, f := range []string{c.file, "util.h"} {
						b, err := os.ReadFile(filepath.Join(src, f))
						if err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
							t.Fatal(err)
						}
					}
					args := append([]string{"-g", opt}, c.args...)
					if mapped {
						args = append(args, "-fdebug-prefix-map="+dir+"=/src")
					}
					rel := buildIn(t, dir, c.cc, args, c.file, "rel")
					abs := buildIn(t, dir, c.cc, args, filepath.Join(dir, c.file), "abs")
					r, a := compatStructure(t, rel, 1), compatStructure(t, abs, 1)
					a = bytes.ReplaceAll(a, []byte("[abs]"), []byte("[rel]"))
					a = bytes.ReplaceAll(a, []byte(abs), []byte(rel))
					// With the prefix map, the relative build's include
					// directory is "/src/." where the absolute one's is
					// "/src": hpcstruct prints the header as libdw joins
					// them (Options.RawFileNames), which is not this rule.
					r = bytes.ReplaceAll(r, []byte("/./"), []byte("/"))
					if !bytes.Equal(r, a) {
						t.Errorf("named by an absolute path, the structure differs from the relative build's:\n%s", firstDiff(r, a))
					}
					if !bytes.Contains(a, []byte(`f="Unknown file" n=""`)) {
						t.Error(`no call site of the primary file is f="Unknown file"`)
					}
					if c.headerCall && !bytes.Contains(a, []byte(`util.h" n=""`)) {
						t.Error("no call site in util.h keeps its file")
					}
				})
			}
		}
	}
}

// buildIn compiles source with cc and args in dir into dir/out.
func buildIn(t *testing.T, dir, cc string, args []string, source, out string) string {
	t.Helper()
	cmd := exec.Command(cc, append(args, "-o", out, source)...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(cmd.Args[1:], " "), err, b)
	}
	return filepath.Join(dir, out)
}

// firstDiff shows the first line where a and b differ.
func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < min(len(la), len(lb)); i++ {
		if la[i] != lb[i] {
			return "line " + strings.TrimSpace(la[i]) + "\n  vs " + strings.TrimSpace(lb[i])
		}
	}
	return "one is a prefix of the other"
}
