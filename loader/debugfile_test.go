package loader

import (
	"bloop/internal/testenv"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// summary is what must not change when the debug info moves or is compressed.
type summary struct {
	Funcs, Procs, Rows, Inlines int
	FirstRow                    LineRow
}

func summarize(img *Image) summary {
	s := summary{Funcs: len(img.Funcs), Procs: len(img.Procs), Rows: img.Lines.Len()}
	if img.Lines.Len() > 0 {
		s.FirstRow = img.Lines.Row(0)
	}
	for _, p := range img.Procs {
		s.Inlines += len(p.Inlines)
	}
	return s
}

func objcopy(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("objcopy", args...).CombinedOutput(); err != nil {
		t.Fatalf("objcopy %v: %v\n%s", args, err, out)
	}
}

// TestSeparateDebugInfo strips a corpus binary and finds its debug info
// again through .gnu_debuglink, through build-id under --debug-dir, beside
// it in perf's build-id cache, and in zlib- and zstd-compressed sections.
func TestSeparateDebugInfo(t *testing.T) {
	testenv.Need(t, "objcopy")
	src := corpus + "tmpl-gcc12-O2"
	ref, err := Open(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := summarize(ref)
	dir := t.TempDir()

	// .gnu_debuglink next to the binary
	bin := filepath.Join(dir, "prog")
	dbg := filepath.Join(dir, "prog.debug")
	objcopy(t, "--only-keep-debug", src, dbg)
	objcopy(t, "--strip-debug", "--add-gnu-debuglink="+dbg, src, bin)
	img, err := Open(bin, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if img.DebugFile != dbg {
		t.Errorf("debuglink: debug file %q, want %q", img.DebugFile, dbg)
	}
	if got := summarize(img); !reflect.DeepEqual(got, want) {
		t.Errorf("debuglink: %+v, want %+v", got, want)
	}

	// build-id under an extra debug root, fully stripped binary (no debuglink)
	stripped := filepath.Join(dir, "stripped")
	objcopy(t, "--strip-all", src, stripped)
	id := buildIDHex(t, src)
	root := filepath.Join(dir, "debugroot")
	p := filepath.Join(root, ".build-id", id[:2], id[2:]+".debug")
	os.MkdirAll(filepath.Dir(p), 0o755)
	objcopy(t, "--only-keep-debug", src, p)
	img, err = Open(stripped, Options{DebugDirs: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	if img.DebugFile != p {
		t.Errorf("build-id: debug file %q, want %q", img.DebugFile, p)
	}
	if got := summarize(img); !reflect.DeepEqual(got, want) {
		t.Errorf("build-id (symbols from the debug file): %+v, want %+v", got, want)
	}

	// perf's build-id cache: the binary as elf, its debug file beside it
	perfDir := filepath.Join(dir, "perf", id)
	os.MkdirAll(perfDir, 0o755)
	objcopy(t, "--strip-all", src, filepath.Join(perfDir, "elf"))
	objcopy(t, "--only-keep-debug", src, filepath.Join(perfDir, "debug"))
	img, err = Open(filepath.Join(perfDir, "elf"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if img.DebugFile != filepath.Join(perfDir, "debug") {
		t.Errorf("perf's build-id cache: debug file %q, want %q", img.DebugFile, filepath.Join(perfDir, "debug"))
	}
	if got := summarize(img); !reflect.DeepEqual(got, want) {
		t.Errorf("perf's build-id cache: %+v, want %+v", got, want)
	}

	for _, c := range []string{"zlib", "zstd"} {
		z := filepath.Join(dir, "z-"+c)
		if out, err := exec.Command("objcopy", "--compress-debug-sections="+c, src, z).CombinedOutput(); err != nil {
			t.Logf("objcopy cannot compress with %s: %s", c, out)
			continue
		}
		img, err := Open(z, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := summarize(img); !reflect.DeepEqual(got, want) {
			t.Errorf("%s-compressed: %+v, want %+v", c, got, want)
		}
	}
}

// isBuild reports whether the file at path has the GNU build-id id (hex),
// so that facts about one package version are checked only on it; it says
// why not in the test's log.
func isBuild(t *testing.T, path, id string) bool {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Logf("%s: %v", path, err)
		return false
	}
	got := fmt.Sprintf("%x", buildID(f))
	f.Close()
	if got != id {
		t.Logf("%s: build-id %s, not the one the facts are about", path, got)
		return false
	}
	return true
}

func buildIDHex(t *testing.T, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id := buildID(f)
	if len(id) < 2 {
		t.Fatal("no build-id")
	}
	const hexdigits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(id))
	for _, b := range id {
		out = append(out, hexdigits[b>>4], hexdigits[b&15])
	}
	return string(out)
}
