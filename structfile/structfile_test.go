package structfile

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"bloop/cache"
	"bloop/dyninst"
	"bloop/pipeline"
)

const bin = "../testdata/bin/loops-gcc12-O2"

func run(t *testing.T, c *cache.Cache, b string, opt Options) (*Result, []byte) {
	t.Helper()
	var buf bytes.Buffer
	r, err := Cached(c, b, opt, &buf)
	if err != nil {
		t.Fatal(err)
	}
	return r, buf.Bytes()
}

// TestCachedSameBytes: a hit gives the bytes of the miss and of an
// uncached run; another option or another binary is a miss.
func TestCachedSameBytes(t *testing.T) {
	if _, err := os.Stat(bin); err != nil {
		t.Fatal("testdata binary missing")
	}
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, plain := run(t, nil, bin, Options{})
	r1, miss := run(t, c, bin, Options{})
	r2, hit := run(t, c, bin, Options{})
	if r1.Cached || !r2.Cached {
		t.Fatalf("first run cached %v, second %v", r1.Cached, r2.Cached)
	}
	if !bytes.Equal(plain, miss) || !bytes.Equal(miss, hit) {
		t.Fatal("cached output differs from the analysis")
	}
	for _, opt := range []Options{
		{JSON: true},
		{Pretty: true},
		{Pipeline: pipeline.Options{Dyninst: dyninst.Hpcstruct}},
		{Pipeline: pipeline.Options{Engine: pipeline.Heuristic}},
		{Replace: []Replacement{{"/src", "/x"}}},
	} {
		if r, _ := run(t, c, bin, opt); r.Cached {
			t.Errorf("%+v: hit on an entry written with other options", opt)
		}
	}
	if r, _ := run(t, c, "../testdata/bin/loops-clang14-O2", Options{}); r.Cached {
		t.Error("another binary hits")
	}
	// The module path is put into the stored file on each hit.
	elsewhere := Options{ModulePath: "/elsewhere/a&b<c>\"d\" é/loops"}
	_, want := run(t, nil, bin, elsewhere)
	if r, got := run(t, c, bin, elsewhere); !r.Cached || !bytes.Equal(got, want) {
		t.Errorf("another module path: cached %v, same bytes as uncached %v", r.Cached, bytes.Equal(got, want))
	}
	// The thread count does not change the bytes, so it shares the entry.
	if r, _ := run(t, c, bin, Options{Pipeline: pipeline.Options{Workers: 1}}); !r.Cached {
		t.Error("-j1 misses the entry of the default thread count")
	}
}

// TestCachedSourceDependency: in the hybrid mode the output depends on
// the sources read; editing one makes the entry stale.
func TestCachedSourceDependency(t *testing.T) {
	if _, err := os.Stat(bin); err != nil {
		t.Fatal("testdata binary missing")
	}
	dir := t.TempDir()
	c, _ := cache.Open(filepath.Join(dir, "cache"))
	src, err := os.ReadFile("../testdata/src/loops.c")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "loops.c"), src, 0o644)
	opt := Options{Pipeline: pipeline.Options{SourceDirs: []string{dir}}}
	run(t, c, bin, opt)
	if r, _ := run(t, c, bin, opt); !r.Cached {
		t.Fatal("miss with unchanged sources")
	}
	os.WriteFile(filepath.Join(dir, "loops.c"), append([]byte("\n"), src...), 0o644)
	r, shifted := run(t, c, bin, opt)
	if r.Cached {
		t.Error("hit after the source changed")
	}
	_, fresh := run(t, nil, bin, opt)
	if !bytes.Equal(shifted, fresh) {
		t.Error("the re-analysis after a source change differs from an uncached run")
	}
}

func TestParseReplacement(t *testing.T) {
	for _, tc := range []struct {
		in       string
		old, new string
		ok       bool
	}{
		{"/a=/b", "/a", "/b", true},
		{"/a=", "/a", "", true},
		{`/a\=x=/b`, "/a=x", "/b", true},
		{"/a", "", "", false},
		{"/a=/b=/c", "", "", false},
		{"=/b", "", "", false},
	} {
		r, err := ParseReplacement(tc.in)
		if (err == nil) != tc.ok || tc.ok && (r.Old != tc.old || r.New != tc.new) {
			t.Errorf("%q: %+v, %v", tc.in, r, err)
		}
	}
}
