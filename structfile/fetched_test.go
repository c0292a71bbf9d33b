package structfile

import (
	"bytes"
	"debug/elf"
	"os/exec"
	"path/filepath"
	"testing"

	"bloop/cache"
	"bloop/internal/testenv"
	"bloop/loader"
)

// fetcher serves one debug file whatever build-id is asked for.
type fetcher string

func (f fetcher) Debuginfo([]byte) (string, error) { return string(f), nil }

// TestCachedFetchedDebugFile: the structure of a stripped binary cached
// without debug info is not served once a fetcher provides its debug
// file; the one made with it is, and says where its debug file came from.
func TestCachedFetchedDebugFile(t *testing.T) {
	objcopy := testenv.Need(t, "objcopy")
	dir := t.TempDir()
	stripped, dbg := filepath.Join(dir, "prog"), filepath.Join(dir, "debuginfo")
	for _, args := range [][]string{{"--strip-debug", bin, stripped}, {"--only-keep-debug", bin, dbg}} {
		if out, err := exec.Command(objcopy, args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy: %v\n%s", err, out)
		}
	}
	if f, err := elf.Open(stripped); err != nil || loader.BuildID(f) == nil {
		t.Fatalf("no build-id: %v", err)
	}
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{ModulePath: "/prog"}
	_, without := run(t, c, stripped, opt)
	opt.Load.Fetcher = fetcher(dbg)
	r1, with := run(t, c, stripped, opt)
	r2, again := run(t, c, stripped, opt)
	if r1.Cached || bytes.Equal(with, without) {
		t.Errorf("served the structure made without debug info (cached %v)", r1.Cached)
	}
	if !r2.Cached || !bytes.Equal(again, with) {
		t.Errorf("second run: cached %v, same bytes %v", r2.Cached, bytes.Equal(again, with))
	}
	for i, r := range []*Result{r1, r2} {
		if r.DebugFile != dbg || r.DebugSource != loader.DebugDebuginfod {
			t.Errorf("run %d: debug file %q from %q", i+1, r.DebugFile, r.DebugSource)
		}
	}
}
