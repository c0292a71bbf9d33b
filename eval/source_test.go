package eval

import (
	"os"
	"reflect"
	"testing"
)

// TestSourceLoops pins the loop header lines found in the corpus sources
// (clang's AST for C and C++, DO statements for Fortran).
func TestSourceLoops(t *testing.T) {
	want := map[string][]int{
		"loops.c":  {10, 11, 18, 19, 21, 29, 43, 52, 68},
		"inline.c": {21, 29, 39, 44, 53},
		"tmpl.cpp": {13, 17, 24, 30, 41, 51, 55, 56, 61, 63, 68, 76},
		"nest.f90": {17, 30, 31, 48, 49, 60},
	}
	for src, w := range want {
		got, err := SourceLoops("../testdata/src/" + src)
		if err != nil {
			t.Logf("%s: %v (skipped)", src, err)
			continue
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s: loops at %v, want %v", src, got, w)
		}
	}
}

// sourcePins are the source loops found on their line per mode (hpcstruct,
// dwarf, hybrid, heuristic) on the -O2 corpus when this test was written.
var sourcePins = []struct {
	bin, src                            string
	hpcstruct, dwarf, hybrid, heuristic int
}{
	{"loops-gcc12-O2", "loops.c", 8, 8, 7, 7},
	{"loops-clang14-O2", "loops.c", 8, 8, 8, 8},
	{"inline-gcc12-O2", "inline.c", 5, 5, 4, 4},
	{"inline-clang14-O2", "inline.c", 4, 4, 4, 3},
	{"licm-gcc12-O2", "licm.c", 8, 8, 7, 7},
	{"licm-clang14-O2", "licm.c", 7, 7, 7, 7},
	{"nest-gfortran12-O2", "nest.f90", 1, 1, 1, 1},
	{"tmpl-gcc12-O2", "tmpl.cpp", 9, 9, 9, 9},
	{"tmpl-clang14-O2", "tmpl.cpp", 9, 9, 9, 9},
	{"switch-gcc12-O2", "switch.c", 3, 3, 3, 3},
	{"switch-clang14-O2", "switch.c", 3, 3, 3, 3},
	{"irred-gcc12-O2", "irred.c", 3, 3, 3, 3},
	{"irred-clang14-O2", "irred.c", 3, 3, 3, 3},
	{"noreturn-gcc12-O2", "noreturn.c", 5, 5, 5, 5},
	{"noreturn-clang14-O2", "noreturn.c", 4, 4, 4, 4},
	{"recur-gcc12-O2", "recur.c", 1, 1, 1, 1},
	{"recur-clang14-O2", "recur.c", 1, 1, 1, 1},
	{"hot-gcc12-O2", "hot.c", 2, 2, 2, 2},
	{"hot-clang14-O2", "hot.c", 2, 2, 2, 2},
}

// TestSourceLoopLines compares every mode's loop lines with the source.
func TestSourceLoopLines(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, p := range sourcePins {
		bin := "../testdata/bin/" + p.bin
		if _, err := os.Stat(bin); err != nil {
			t.Skip("corpus missing")
		}
		rs, err := SourceEval("../testdata/src/"+p.src, bin, 2)
		if err != nil {
			t.Logf("%s: %v (skipped)", p.bin, err)
			continue
		}
		want := map[string]int{"hpcstruct": p.hpcstruct, "dwarf": p.dwarf, "hybrid": p.hybrid, "heuristic": p.heuristic}
		for _, r := range rs {
			if r.Found < want[r.Mode] {
				t.Errorf("%s: %s finds %d of %d source loops on their line, pinned at %d", p.bin, r.Mode, r.Found, r.Source, want[r.Mode])
			}
		}
	}
}
