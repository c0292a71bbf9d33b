package eval

import (
	"bloop/internal/testenv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pinned are the thesis engine's figures on the corpus when this test was
// written (percent): alien precision, recall, right file, loop context,
// loop header line. A change that lowers one by more than half a point
// fails; raise the pins when the engine improves.
var pinned = []struct {
	bin                                    string
	precision, recall, file, context, line float64
}{
	{"hot-clang14-O2", 100.0, 92.9, 92.9, 100.0, 100.0},
	{"hot-gcc12-O2", 97.5, 100.0, 100.0, 100.0, 100.0},
	{"inline-clang14-O2", 100.0, 96.5, 96.5, 100.0, 50.0},
	{"inline-gcc12-O2", 99.6, 100.0, 100.0, 100.0, 83.3},
	{"irred-clang14-O2", 100.0, 100.0, 100.0, 100.0, 100.0},
	{"irred-gcc12-O2", 100.0, 100.0, 100.0, 100.0, 83.3},
	{"licm-clang14-O2", 100.0, 100.0, 100.0, 100.0, 100.0},
	{"licm-gcc12-O2", 100.0, 100.0, 100.0, 100.0, 87.5},
	{"loops-clang14-O2", 100.0, 100.0, 100.0, 100.0, 88.9},
	{"loops-gcc12-O2", 100.0, 100.0, 100.0, 100.0, 80.0},
	{"nest-gfortran12-O2", 63.2, 100.0, 100.0, 100.0, 66.7},
	{"noreturn-clang14-O2", 100.0, 100.0, 100.0, 100.0, 100.0},
	{"noreturn-gcc12-O2", 100.0, 100.0, 100.0, 100.0, 83.3},
	{"recur-clang14-O2", 100.0, 100.0, 100.0, 100.0, 100.0},
	{"recur-gcc12-O2", 88.9, 100.0, 100.0, 100.0, 100.0},
	{"switch-clang14-O2", 100.0, 100.0, 100.0, 100.0, 100.0},
	{"switch-gcc12-O2", 100.0, 100.0, 100.0, 100.0, 100.0},
	{"stl-clang14-O2", 98.6, 93.3, 90.3, 96.4, 84.3},
	{"stl-gcc12-O2", 98.8, 99.8, 98.4, 98.2, 93.0},
	{"tmpl-clang14-O2", 99.9, 95.3, 92.3, 100.0, 87.9},
	{"tmpl-gcc12-O2", 99.5, 99.4, 82.1, 100.0, 94.1},
	{"hot-clang14-O3", 100.0, 92.9, 92.9, 100.0, 100.0},
	{"hot-gcc12-O3", 97.5, 100.0, 100.0, 100.0, 100.0},
	{"inline-clang14-O3", 100.0, 96.5, 96.5, 100.0, 50.0},
	{"inline-gcc12-O3", 100.0, 100.0, 100.0, 100.0, 83.3},
	{"irred-clang14-O3", 100.0, 100.0, 100.0, 100.0, 100.0},
	{"irred-gcc12-O3", 100.0, 100.0, 100.0, 100.0, 83.3},
	{"licm-clang14-O3", 100.0, 100.0, 100.0, 100.0, 100.0},
	{"licm-gcc12-O3", 100.0, 100.0, 100.0, 100.0, 100.0},
	{"loops-clang14-O3", 100.0, 100.0, 100.0, 100.0, 88.9},
	{"loops-gcc12-O3", 100.0, 100.0, 100.0, 100.0, 81.8},
	{"nest-gfortran12-O3", 63.2, 100.0, 100.0, 100.0, 75.0},
	{"noreturn-clang14-O3", 100.0, 100.0, 100.0, 100.0, 100.0},
	{"noreturn-gcc12-O3", 100.0, 100.0, 100.0, 100.0, 83.3},
	{"recur-clang14-O3", 100.0, 100.0, 100.0, 100.0, 100.0},
	{"recur-gcc12-O3", 88.9, 100.0, 100.0, 100.0, 100.0},
	{"switch-clang14-O3", 100.0, 100.0, 100.0, 100.0, 100.0},
	{"switch-gcc12-O3", 100.0, 100.0, 100.0, 100.0, 100.0},
	{"stl-clang14-O3", 98.8, 94.1, 91.5, 99.0, 87.3},
	{"stl-gcc12-O3", 99.3, 99.7, 98.7, 98.7, 88.3},
	{"tmpl-clang14-O3", 99.7, 95.0, 92.2, 97.1, 88.6},
	{"tmpl-gcc12-O3", 99.3, 99.5, 79.8, 100.0, 94.6},
}

func TestPinnedAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	total, cxx := &Result{Name: "total"}, &Result{Name: "C/C++"}
	for _, p := range pinned {
		path := "../testdata/bin/" + p.bin
		if _, err := os.Stat(path); err != nil {
			t.Fatal("corpus missing")
		}
		r, err := Binary(path, 2)
		if err != nil {
			t.Fatal(err)
		}
		total.Add(r)
		if !strings.Contains(p.bin, "gfortran") {
			cxx.Add(r)
		}
		got := []float64{r.Precision(), r.Recall(), r.FileShare(), r.LoopContext(), r.LoopLine()}
		want := []float64{p.precision, p.recall, p.file, p.context, p.line}
		names := []string{"precision", "recall", "file", "loop context", "loop line"}
		for i := range got {
			if 100*got[i] < want[i]-0.5 {
				t.Errorf("%s: %s %.1f%%, pinned at %.1f%%", p.bin, names[i], 100*got[i], want[i])
			}
			if got[i] > 1 {
				t.Errorf("%s: %s %.1f%% is above 100%%: a byte or loop counted twice", p.bin, names[i], 100*got[i])
			}
		}
	}
	// The targets on the C and C++ -O2/-O3 binaries.
	if cxx.Precision() < 0.97 || cxx.Recall() < 0.90 || cxx.LoopContext() < 0.95 {
		t.Errorf("C/C++ corpus: precision %.1f%%, recall %.1f%%, loop context %.1f%%; targets 97%%, 90%%, 95%%",
			100*cxx.Precision(), 100*cxx.Recall(), 100*cxx.LoopContext())
	}
	for _, r := range []*Result{total, cxx} {
		t.Logf("%s: precision %.1f%%, recall %.1f%%, file %.1f%%, loop context %.1f%%, loop line %.1f%% (%d loops)",
			r.Name, 100*r.Precision(), 100*r.Recall(), 100*r.FileShare(), 100*r.LoopContext(), 100*r.LoopLine(), r.Loops)
	}
}

// TestDebianDebugAccuracy pins the thesis engine's figures on two real
// optimized libraries with DWARF inline records from Debian's -dbg
// packages (libstdc++6-12-dbg's debug build, libgsl-dbg).
func TestDebianDebugAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	gsl, _ := filepath.Glob("/usr/lib/x86_64-linux-gnu/libgsl.so.27.*")
	libs := map[string][3]float64{ // precision, recall, loop context
		"/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30": {94.1, 99.4, 99.9},
	}
	if len(gsl) > 0 {
		libs[gsl[0]] = [3]float64{99.2, 88.1, 95.8}
	}
	n := 0
	for lib, want := range libs {
		if _, err := os.Stat(lib); err != nil {
			continue
		}
		r, err := Binary(lib, 2)
		if err != nil {
			t.Errorf("%s: %v", lib, err)
			continue
		}
		n++
		got := [3]float64{100 * r.Precision(), 100 * r.Recall(), 100 * r.LoopContext()}
		for i, name := range []string{"precision", "recall", "loop context"} {
			if got[i] < want[i]-0.5 {
				t.Errorf("%s: %s %.1f%%, pinned at %.1f%%", filepath.Base(lib), name, got[i], want[i])
			}
		}
		t.Logf("%s: precision %.1f%%, recall %.1f%%, file %.1f%%, loop context %.1f%%, loop line %.1f%% (%d loops)",
			filepath.Base(lib), got[0], got[1], 100*r.FileShare(), got[2], 100*r.LoopLine(), r.Loops)
	}
	if n == 0 {
		testenv.Absent(t, "no -dbg libraries installed")
	}
}
