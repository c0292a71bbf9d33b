package loader

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"bloop/internal/testenv"
)

// loading is what an image's loading fills, for comparing two loadings.
type loading struct {
	Funcs       []*Func
	Procs       []*Subprogram
	Descriptors []*Descriptor
	Lines       *LineTable
	Warnings    []string
	Corrupt     []Corruption
	DebugFile   string
	Frames      any
	CallSites   []CallSite
	procIndex   []procRange
}

func loadedOf(img *Image) loading {
	return loading{img.Funcs, img.Procs, img.Descriptors, img.Lines, img.Warnings, img.Corrupt, img.DebugFile,
		img.Frames, img.CallSites, img.procIndex}
}

// TestLazyDWARF: an image opened with LazyDWARF has its symbols, code and
// frames and no DWARF until LoadDWARF, which several goroutines may call
// at once; then it is the image Open reads whole, DWARF from the file
// itself, from a separate debug file, compressed or corrupt alike.
func TestLazyDWARF(t *testing.T) {
	testenv.Need(t, "objcopy")
	dir := t.TempDir()
	split := filepath.Join(dir, "split")
	objcopy(t, "--only-keep-debug", corpus+"tmpl-gcc12-O2", split+".debug")
	objcopy(t, "--strip-debug", "--add-gnu-debuglink="+split+".debug", corpus+"tmpl-gcc12-O2", split)
	zlib := filepath.Join(dir, "zlib")
	objcopy(t, "--compress-debug-sections=zlib", corpus+"inline-clang14-O2", zlib)
	for _, path := range []string{corpus + "tmpl-gcc12-O2", corpus + "nest-gfortran12-O2", corpus + "libinline-gcc12-O2.so",
		corpus + "hot-gcc12-O2nodebug", split, zlib, bigline, bigdecl} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			whole, err := Open(path, Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			lazy, err := Open(path, Options{Workers: 2, LazyDWARF: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(whole.Procs) > 0 && len(lazy.Procs) > 0 {
				t.Error("procedures read before LoadDWARF")
			}
			if !reflect.DeepEqual(lazy.Funcs, whole.Funcs) || !reflect.DeepEqual(lazy.Frames, whole.Frames) || !reflect.DeepEqual(lazy.Sections, whole.Sections) {
				t.Error("symbols, frames or code differ before LoadDWARF")
			}
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					lazy.LoadDWARF()
				}()
			}
			wg.Wait()
			lazy.LoadDWARF() // again: nothing more
			if got, want := loadedOf(lazy), loadedOf(whole); !reflect.DeepEqual(got, want) {
				t.Errorf("lazily read image differs: %d procedures, %d line rows, warnings %q, corrupt %+v; want %d, %d, %q, %+v",
					len(got.Procs), got.Lines.Len(), got.Warnings, got.Corrupt, len(want.Procs), want.Lines.Len(), want.Warnings, want.Corrupt)
			}
			whole.LoadDWARF() // read by Open: nothing to do
			if len(whole.Warnings) != len(lazy.Warnings) {
				t.Error("LoadDWARF changed an image read whole")
			}
		})
	}
}

// TestLazyDWARFCopy: WithFuncs of a lazily opened image reads the DWARF
// first, into both.
func TestLazyDWARFCopy(t *testing.T) {
	img, err := Open(corpus+"tmpl-gcc12-O2", Options{LazyDWARF: true})
	if err != nil {
		t.Fatal(err)
	}
	c := img.WithFuncs(img.Funcs)
	if len(img.Procs) == 0 || len(c.Procs) != len(img.Procs) || c.Lines != img.Lines {
		t.Errorf("copy: %d procedures, original %d", len(c.Procs), len(img.Procs))
	}
}

// TestLazyDWARFChanged: a file changed between Open and LoadDWARF is not
// read as the one opened: the image keeps its symbols, with a warning.
func TestLazyDWARFChanged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prog")
	b, err := os.ReadFile(corpus + "tmpl-gcc12-O2")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	img, err := Open(path, Options{LazyDWARF: true})
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	img.LoadDWARF()
	if len(img.Procs) != 0 || len(img.Warnings) != 1 || !strings.Contains(img.Warnings[0], "changed since it was opened") {
		t.Errorf("%d procedures, warnings %q", len(img.Procs), img.Warnings)
	}
	if img.Lines == nil || len(img.Funcs) == 0 {
		t.Error("symbols or the empty line table lost")
	}
}
