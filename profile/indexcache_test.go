package profile

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"bloop/cache"
	"bloop/loader"
)

// TestIndexCacheRoundTrip: the index a report reads from the cache is the
// one the analysis built, entry for entry.
func TestIndexCacheRoundTrip(t *testing.T) {
	for _, bin := range []string{"../testdata/bin/inline-gcc12-O2", "../testdata/bin/stl-clang14-O3"} {
		img, err := loader.Open(bin, loader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := cache.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		fresh := analyzeModule(nil, img, img.Name, loader.Options{}, nil, nil)
		miss := analyzeModule(c, img, img.Name, loader.Options{}, nil, nil)
		hit := analyzeModule(c, img, img.Name, loader.Options{}, nil, nil)
		if fresh == nil || len(fresh.entries) == 0 {
			t.Fatalf("%s: empty index", bin)
		}
		for _, x := range []*scopeIndex{miss, hit} {
			if len(x.entries) != len(fresh.entries) {
				t.Fatalf("%s: %d entries, want %d", bin, len(x.entries), len(fresh.entries))
			}
			for i, e := range fresh.entries {
				g := x.entries[i]
				if g.lo != e.lo || g.hi != e.hi || len(g.path) != len(e.path) {
					t.Fatalf("%s: entry %d differs", bin, i)
				}
				for k := range e.path {
					if !reflect.DeepEqual(*g.path[k], *e.path[k]) {
						t.Fatalf("%s: entry %d element %d: %+v, want %+v", bin, i, k, *g.path[k], *e.path[k])
					}
				}
			}
		}
		// Elements shared by paths stay shared: the views key on them.
		if len(hit.entries) > 1 && hit.entries[0].path[0] != hit.entries[1].path[0] && fresh.entries[0].path[0] == fresh.entries[1].path[0] {
			t.Errorf("%s: a shared procedure element was duplicated", bin)
		}
	}
}

// TestDecodeIndexDamaged: a damaged entry is an error, never a panic or
// a huge allocation; the report then re-analyses the module.
func TestDecodeIndexDamaged(t *testing.T) {
	img, err := loader.Open("../testdata/bin/inline-gcc12-O2", loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := encodeIndex(analyzeModule(nil, img, img.Name, loader.Options{}, nil, nil))
	if _, err := decodeIndex(b); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 5, len(indexMagic), len(indexMagic) + 3, len(b) / 2, len(b) - 1} {
		if _, err := decodeIndex(b[:n]); err == nil {
			t.Errorf("cut to %d of %d bytes: no error", n, len(b))
		}
	}
	bad := append([]byte(nil), b...)
	for i := len(indexMagic); i < len(bad); i += 97 {
		bad[i] = 0xff
	}
	decodeIndex(bad) // must not panic
}

// FuzzDecodeIndex: a cache entry is input too (a disk can corrupt it, a
// user can edit it): any bytes decode or give an error, and what decodes
// encodes to bytes that decode to the same index.
func FuzzDecodeIndex(f *testing.F) {
	f.Add([]byte(indexMagic + "\x01\x01a\x01\x00\x00\x00\x00\x01\x00\x00\x00\x01\x01\x00\x01\x10\x04\x00\x00"))
	if img, err := loader.Open("../testdata/bin/inline-gcc12-O2", loader.Options{}); err == nil {
		f.Add(encodeIndex(analyzeModule(nil, img, img.Name, loader.Options{}, nil, nil)))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := decodeIndex(b)
		if err != nil {
			return
		}
		y, err := decodeIndex(encodeIndex(x))
		if err != nil {
			t.Fatalf("a decoded index does not decode once encoded again: %v", err)
		}
		if !bytes.Equal(encodeIndex(x), encodeIndex(y)) {
			t.Fatal("an index changes when encoded and decoded again")
		}
	})
}

// TestIndexCachePartial: an index of the sampled procedures only is kept
// under a key of its own (asked again with the same addresses, the same
// index), and never answers for the whole module, whose index is
// analysed and stored apart and then answers any addresses.
func TestIndexCachePartial(t *testing.T) {
	img, err := loader.Open("../testdata/bin/inline-gcc12-O2", loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fresh := encodeIndex(analyzeModule(nil, img, img.Name, loader.Options{}, nil, nil))
	var main uint64
	for _, fn := range img.Funcs {
		if fn.Name == "main" {
			main = fn.Addr
		}
	}
	only := []uint64{main}
	part := analyzeModule(c, img, img.Name, loader.Options{}, nil, only)
	if part == nil || len(part.entries) == 0 || bytes.Equal(encodeIndex(part), fresh) {
		t.Fatalf("the index of main alone: %v", part)
	}
	for _, e := range part.entries {
		if e.path[0].Name != "main" {
			t.Fatalf("the index of main holds %s", e.path[0].Name)
		}
	}
	if again := analyzeModule(c, img, img.Name, loader.Options{}, nil, only); !bytes.Equal(encodeIndex(again), encodeIndex(part)) {
		t.Errorf("the stored partial index differs")
	}
	whole := analyzeModule(c, img, img.Name, loader.Options{}, nil, nil)
	if !bytes.Equal(encodeIndex(whole), fresh) {
		t.Errorf("after a partial analysis, the whole module's index is not the whole")
	}
	if after := analyzeModule(c, img, img.Name, loader.Options{}, nil, only); !bytes.Equal(encodeIndex(after), fresh) {
		t.Errorf("once stored, the whole module's index does not answer for a part of it")
	}
}

// TestIndexOutsideLines: the index of the procedures holding some
// addresses keeps the line-table row of those outside every procedure
// (or that there is none), through the cache.
func TestIndexOutsideLines(t *testing.T) {
	img, err := loader.Open("../testdata/bin/inline-gcc12-O2", loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var only []uint64
	for _, fn := range img.Funcs {
		only = append(only, fn.Addr, fn.End, fn.End+1)
	}
	slices.Sort(only)
	only = slices.Compact(only)
	miss := analyzeModule(c, img, img.Name, loader.Options{}, nil, only)
	hit := analyzeModule(c, img, img.Name, loader.Options{}, nil, only)
	rows := 0
	for _, a := range only {
		row, ok := img.Lines.Lookup(a)
		want := lineRow{}
		if ok {
			want = lineRow{file: row.File, line: row.Line, ok: true}
		}
		for _, x := range []*scopeIndex{miss, hit} {
			got, known := x.lineOutside(a)
			if x.lookup(a) != nil {
				if known {
					t.Errorf("%#x: in the entries and outside", a)
				}
				continue
			}
			if !known || got != want {
				t.Errorf("%#x: outside row %+v (kept: %v), want %+v", a, got, known, want)
			}
			if ok {
				rows++
			}
		}
	}
	if len(hit.outside) == 0 || rows == 0 {
		t.Errorf("%d addresses outside the entries, %d of them with a row: the test tests nothing", len(hit.outside), rows/2)
	}
}
