package eval

import (
	"bloop/internal/testenv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crossExplained lists the cross-corpus binaries whose mode finds a
// different number of source loops on their line than the x86-64 build of
// the same program with the same compiler and options, with the difference
// (cross minus x86-64) and why. Key: "<arch>/<binary> <mode>". The lines
// named are the loop lines of the source file that only one build gets;
// hpcstruct's mode writes a loop at its header block's first line, so
// where the compilers order a loop's blocks differently its line moves.
var crossExplained = map[string]struct {
	delta  int
	reason string
}{
	"arm64/licm-gcc12-O3 hpcstruct":         {1, "the loop at source line 14 is written at 14 on aarch64, at 16 (its header block's first line) on x86-64"},
	"arm64/nest-gfortran12-O2 hpcstruct":    {1, "the loop at source line 31 is written at 31 on aarch64, at 32 on x86-64"},
	"arm64/nest-gfortran12-O2 hybrid":       {1, "aarch64 writes loops at 31 and 48 (source loop lines) where x86-64 writes 26 and 32: gfortran lays the array-syntax loops out differently"},
	"arm64/nest-gfortran12-O3 hpcstruct":    {1, "as at -O2: 31 on aarch64, 32 on x86-64"},
	"arm64/nest-gfortran12-O3 hybrid":       {1, "as at -O2: 31 and 48 on aarch64, 26 and 32 on x86-64"},
	"arm64/stl-gcc12-O3 hpcstruct":          {1, "aarch64 keeps loops at 33 and 41 (and one at line 0) that x86-64's build merges into the one it writes at 49"},
	"ppc64le/licm-gcc12-O2 hpcstruct":       {1, "the loop at source line 55 is a loop in the ppc64le build; x86-64's gcc leaves no loop there"},
	"ppc64le/licm-gcc12-O2 hybrid":          {1, "as in hpcstruct's mode: the loop at 55 exists only in the ppc64le build"},
	"ppc64le/loops-gcc12-O3 hpcstruct":      {-1, "init's inner loop (line 11, 64 iterations) is unrolled completely into vector code on ppc64le: its only back edge is the outer loop's bdnz, so no loop exists at 11"},
	"ppc64le/loops-gcc12-O3 hybrid":         {-1, "as in hpcstruct's mode: no loop at line 11 in the ppc64le code"},
	"ppc64le/nest-gfortran12-O2 hpcstruct":  {2, "ppc64le's header blocks start on the source loop lines 17 and 49, x86-64's on 19 and 50"},
	"ppc64le/nest-gfortran12-O3 hybrid":     {1, "ppc64le writes a loop at 48 (a source loop's line) where x86-64 writes 26"},
	"ppc64le/noreturn-clang14-O2 hpcstruct": {-2, "clang rotates the two loops on ppc64le so their header blocks start with the body's first line (14, 24; x86-64: 13, 23, the for lines); the default mode finds both"},
	"ppc64le/noreturn-clang14-O3 hpcstruct": {-1, "as at -O2 for the second loop: 24 on ppc64le, 23 on x86-64; the default mode finds it"},
}

// crossModes are the modes compared: hpcstruct's and the default.
func crossModes() []Mode {
	var out []Mode
	for _, m := range Modes() {
		if m.Name == "hpcstruct" || m.Name == "hybrid" {
			out = append(out, m)
		}
	}
	return out
}

// TestCrossSourceLoops checks that bloop finds as many source loops on
// their line in the arm64 and ppc64le builds of each corpus program as in
// its x86-64 build, or that crossExplained says why not. With -v it
// prints the per-architecture totals docs/architectures.md quotes.
func TestCrossSourceLoops(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	modes := crossModes()
	loops := map[string][]int{} // by source file: clang parses each once
	testenv.NeedAny(t, "clang", "clang-14", "clang-15", "clang-16")
	for _, arch := range []string{"arm64", "ppc64le"} {

		bins, _ := filepath.Glob("../testdata/bin-" + arch + "/*-O[0-9]")
		if len(bins) == 0 {
			t.Fatalf("no %s corpus", arch)

		}
		found, source := map[string]int{}, map[string]int{}
		x86Found := map[string]int{}
		for _, b := range bins {
			name := filepath.Base(b)
			src := sourceOf(name)
			if src == "" {
				t.Errorf("%s: no source for %s", arch, name)
				continue
			}
			want, ok := loops[src]
			if !ok {
				var err error
				if want, err = SourceLoops(src); err != nil {
					t.Fatalf("%s: %v", src, err)
				}
				loops[src] = want
			}
			cross, err := LoopLinesOf(src, want, b, modes, 2)
			if err != nil {
				t.Errorf("%s/%s: %v", arch, name, err)
				continue
			}
			native, err := LoopLinesOf(src, want, "../testdata/bin/"+name, modes, 2)
			if err != nil {
				t.Errorf("%s: x86-64 build: %v", name, err)
				continue
			}
			for i, r := range cross {
				n := native[i]
				found[r.Mode] += r.Found
				source[r.Mode] += r.Source
				x86Found[r.Mode] += n.Found
				key := fmt.Sprintf("%s/%s %s", arch, name, r.Mode)
				e, explained := crossExplained[key]
				switch {
				case explained && r.Found-n.Found != e.delta:
					t.Errorf("%s: finds %d source loops, x86-64 %d: explained difference %+d no longer holds", key, r.Found, n.Found, e.delta)
				case !explained && r.Found != n.Found:
					t.Errorf("%s: finds %d of %d source loops on their line, x86-64 %d", key, r.Found, r.Source, n.Found)
				}
			}
		}
		for _, m := range modes {
			t.Logf("%s %s: %d of %d source loops on their line (x86-64: %d), %d binaries", arch, m.Name, found[m.Name], source[m.Name], x86Found[m.Name], len(bins))
		}
	}
	for k := range crossExplained {
		arch, rest, _ := strings.Cut(k, "/")
		bin, _, _ := strings.Cut(rest, " ")
		if _, err := os.Stat("../testdata/bin-" + arch + "/" + bin); err != nil {
			t.Errorf("crossExplained[%q]: no such binary", k)
		}
	}
}

// sourceOf is the corpus source file of a corpus binary's name.
func sourceOf(name string) string {
	prog, _, _ := strings.Cut(name, "-")
	for _, ext := range []string{".c", ".cpp", ".f90"} {
		p := "../testdata/src/" + prog + ext
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}
