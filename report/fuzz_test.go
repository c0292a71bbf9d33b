package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bloop/cache"
	"bloop/fuzzing"
	"bloop/profile"
)

// FuzzViews: every text view of a perf.data file, damaged as the fuzzer
// likes, after profile has read it. profile's own fuzz targets stop at
// the model (its tests cannot import this package); this one goes on to
// the formatting. Never a panic or a hang; an input profile refuses is
// one error naming the file.
func FuzzViews(f *testing.F) {
	// Two seeds, one per kind of call graph: each worker analyses their
	// modules before it starts, and the others add no path of their own.
	seeds := []string{"../perfevent/testdata/dwarf.data", "../perfevent/testdata/fp.data"}
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	dir := f.TempDir()
	c, err := cache.Open(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	bin, _ := filepath.Abs("../testdata/prof/bin")
	opt := profile.Options{Cache: c, ModuleDirs: []string{bin}}
	// The modules' analysis goes into the cache before the watchdog is on:
	// it is not what is fuzzed here.
	for _, s := range seeds {
		if _, err := profile.Build(s, opt); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		path := fuzzing.WriteInput(t, dir, "perf.data", b)
		defer fuzzing.Watchdog("views", 10*time.Second)()
		p, err := profile.Build(path, opt)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		var out bytes.Buffer
		Summary(&out, p)
		TopDown(&out, p, Options{}, true)
		BottomUp(&out, p, Options{})
		Flat(&out, p, Options{Lines: true})
		if out.Len() == 0 {
			t.Fatal("no view printed anything")
		}
	})
}
