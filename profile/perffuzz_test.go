package profile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bloop/cache"
	"bloop/fuzzing"
)

// perfSeeds are the committed perf.data files of every mode.
func perfSeeds(t testing.TB) [][]byte {
	paths, _ := filepath.Glob("../perfevent/testdata/*.data")
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		t.Fatal("no committed perf.data files")
	}
	return out
}

// reportPerfBytes writes b to a file and reports it as bloop report
// does: a profile and every view, or one error naming the file.
func reportPerfBytes(t *testing.T, dir string, b []byte, c *cache.Cache) {
	bin, _ := filepath.Abs("../testdata/prof/bin")
	reportBytes(t, fuzzing.WriteInput(t, dir, "perf.data", b), Options{Cache: c, ModuleDirs: []string{bin}}, true)
}

// reportBytes reports the input at path as bloop report does: a profile,
// the trees and entries of every view (flat with or without lines), and
// pprof; or one error that names the file. Never a panic or a hang. (The
// text views are package report's, which profile's tests cannot import:
// they only format what these return.)
func reportBytes(t *testing.T, path string, opt Options, lines bool) {
	defer fuzzing.Watchdog("Build", 10*time.Second)()
	p, err := Build(path, opt)
	if err != nil {
		if !strings.Contains(err.Error(), path) {
			t.Fatalf("error %q does not name the file", err)
		}
		return
	}
	for _, root := range p.ThreadTrees() {
		ViewTree(root, false)
	}
	ViewTree(p.BottomUp(false), false)
	p.Flat(lines)
	var out bytes.Buffer
	if err := p.WritePprof(&out); err != nil {
		t.Fatalf("pprof export: %v", err)
	}
}

// FuzzPerfData: report's reading of a perf.data file, from perfevent's
// records through the adapter, the unwinder and the callchains to the
// views and pprof. Never a panic or a hang.
func FuzzPerfData(f *testing.F) {
	for _, s := range perfSeeds(f) {
		f.Add(s)
	}
	dir := f.TempDir()
	c, err := cache.Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	// The modules' analysis, into the cache before the watchdog is on:
	// libc's takes seconds on a busy machine, and is not what is fuzzed.
	bin, _ := filepath.Abs("../testdata/prof/bin")
	for _, p := range []string{"dwarf", "fp"} {
		if _, err := Build("../perfevent/testdata/"+p+".data", Options{Cache: c, ModuleDirs: []string{bin}}); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) { reportPerfBytes(t, dir, b, c) })
}

// TestPerfDataMutants reports damaged copies of the committed files
// (bytes flipped through each file, and cut short) on every run, not
// only under go test -fuzz.
func TestPerfDataMutants(t *testing.T) {
	dir := t.TempDir()
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, seed := range perfSeeds(t) {
		const n = 4 // each report loads libc and libm: about 0.3 s
		for i := 1; i <= n; i++ {
			at := len(seed) * i / (n + 1)
			b := bytes.Clone(seed)
			b[at] ^= 0xff
			reportPerfBytes(t, dir, b, c)
			reportPerfBytes(t, dir, seed[:at], c)
		}
	}
}
