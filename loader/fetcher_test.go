package loader

import (
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"bloop/internal/testenv"
)

// fakeFetcher serves one debug file by build-id and counts what it is
// asked.
type fakeFetcher struct {
	id, path string
	asked    int
}

func (f *fakeFetcher) Debuginfo(id []byte) (string, error) {
	f.asked++
	if hex.EncodeToString(id) == f.id {
		return f.path, nil
	}
	return "", errors.New("not found")
}

// TestFetchedDebugFile: a stripped binary without a local debug file
// reads the fetched one exactly as a local one (same summary), a local
// one is preferred without asking, and a binary with its own DWARF never
// asks.
func TestFetchedDebugFile(t *testing.T) {
	testenv.Need(t, "objcopy")
	src := corpus + "tmpl-gcc12-O2"
	ref, err := Open(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stripped, dbg := filepath.Join(dir, "stripped"), filepath.Join(dir, "fetched", "debuginfo")
	os.Mkdir(filepath.Dir(dbg), 0o755)
	objcopy(t, "--strip-debug", src, stripped)
	objcopy(t, "--only-keep-debug", src, dbg)
	f := &fakeFetcher{id: buildIDHex(t, src), path: dbg}

	img, err := Open(stripped, Options{Fetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	if img.DebugFile != dbg || img.DebugSource != DebugDebuginfod || f.asked != 1 {
		t.Errorf("debug file %q from %q, asked %d", img.DebugFile, img.DebugSource, f.asked)
	}
	if got, want := summarize(img), summarize(ref); !reflect.DeepEqual(got, want) {
		t.Errorf("fetched: %+v, want %+v", got, want)
	}
	if p, from, err := DebugFileFor(stripped, Options{Fetcher: f}); p != dbg || from != DebugDebuginfod || err != nil {
		t.Errorf("DebugFileFor: %q %q %v", p, from, err)
	}

	// A local debug file (build-id under a --debug-dir) comes first.
	root := filepath.Join(dir, "root")
	p := filepath.Join(root, ".build-id", f.id[:2], f.id[2:]+".debug")
	os.MkdirAll(filepath.Dir(p), 0o755)
	objcopy(t, "--only-keep-debug", src, p)
	f.asked = 0
	img, err = Open(stripped, Options{Fetcher: f, DebugDirs: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	if img.DebugFile != p || img.DebugSource != DebugLocal || f.asked != 0 {
		t.Errorf("local: debug file %q from %q, asked %d", img.DebugFile, img.DebugSource, f.asked)
	}
	if img, err = Open(src, Options{Fetcher: f}); err != nil || img.DebugFile != "" || f.asked != 0 {
		t.Errorf("own DWARF: %v, debug file %q, asked %d", err, img.DebugFile, f.asked)
	}
	// A miss is loading without debug info.
	miss := &fakeFetcher{id: "00"}
	if img, err = Open(stripped, Options{Fetcher: miss}); err != nil || img.DebugFile != "" || miss.asked != 1 {
		t.Errorf("miss: %v, debug file %q, asked %d", err, img.DebugFile, miss.asked)
	}
}
