package pipeline

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/testenv"
)

// TestStrippedBuiltCross is TestStrippedRecoveryCross on programs built
// here with Debian's cross gcc 12 and g++ 12 at -O2, not the corpus's:
// a C program (constructor and destructor, a switch, nested loops) and a
// C++ one (std::sort's introsort clones, exceptions, virtual calls). Every
// function symbol counts, _init and _fini included, and a loop the
// stripped analysis nests twice at one header counts against it.
func TestStrippedBuiltCross(t *testing.T) {
	src := testenv.Fixture(t, "testdata/stripped")
	arches := []struct {
		name, triple string
		pins         map[string][3]float64 // strip variant -> minimum entries %, loops %, procedures at an entry %
	}{
		{"arm64", "aarch64-linux-gnu", map[string][3]float64{"strip": {100, 100, 98}, "strip -R .eh_frame": {100, 100, 95}}},
		{"ppc64le", "powerpc64le-linux-gnu", map[string][3]float64{"strip": {100, 100, 97}, "strip -R .eh_frame": {100, 100, 97}}},
	}
	variants := []struct {
		name string
		args []string
	}{
		{"strip", nil},
		{"strip -R .eh_frame", []string{"-R", ".eh_frame", "-R", ".eh_frame_hdr"}},
	}
	for _, a := range arches {
		t.Run(a.name, func(t *testing.T) {
			strip := testenv.Need(t, a.triple+"-strip")
			bins := []string{
				buildCross(t, testenv.Need(t, a.triple+"-gcc"), filepath.Join(src, "table.c")),
				buildCross(t, testenv.Need(t, a.triple+"-g++"), filepath.Join(src, "sort.cpp")),
			}
			for _, v := range variants {
				t.Run(strings.ReplaceAll(v.name, " ", "_"), func(t *testing.T) {
					per := strippedShares(t, strip, v.args, bins)
					checkStripped(t, "all", per["all"], map[string][3]float64{"all": a.pins[v.name]})
				})
			}
		})
	}
}

// buildCross compiles the one source file src with cc at -O2 -g into a
// temporary directory.
func buildCross(t *testing.T, cc, src string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)))
	if b, err := exec.Command(cc, "-O2", "-g", "-o", out, src).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, src, err, b)
	}
	return out
}
