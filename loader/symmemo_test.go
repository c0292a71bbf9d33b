package loader

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// mapMemo is a Memo in memory, counting what it answered.
type mapMemo struct {
	mu         sync.Mutex
	m          map[string][]byte
	hits, puts int
}

func (m *mapMemo) Get(kind string) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.m[kind]
	if b != nil {
		m.hits++
	}
	return b
}

func (m *mapMemo) Put(kind string, b []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string][]byte{}
	}
	m.m[kind] = b
	m.puts++
}

// symbolFields are the Image fields the memo stands in for.
func symbolFields(img *Image) []any {
	return []any{img.Funcs, img.TOC, img.CallSites, img.Frames, img.InitFuncs, img.Glink, img.Corrupt}
}

// TestSymbolsMemo: an image opened with its symbol tables from a memo
// has the procedures, call sites, frames, init functions, TOC, glink and
// corruption of one read from its file, on every corpus binary of the
// three architectures and the system's C and C++ libraries; the first
// opening stores them, the second reads them.
func TestSymbolsMemo(t *testing.T) {
	var paths []string
	for _, dir := range []string{"../testdata/bin", "../testdata/bin-arm64", "../testdata/bin-ppc64le", "../testdata/bin-cc"} {
		ps, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, p := range ps {
			if !strings.HasSuffix(p, "SHA256SUMS") && !strings.HasSuffix(p, ".md") {
				paths = append(paths, p)
			}
		}
	}
	if len(paths) < 100 {
		t.Fatalf("%d corpus binaries", len(paths))
	}
	for _, lib := range []string{"libc.so.6", "libstdc++.so.6", "libm.so.6", "ld-linux-x86-64.so.2"} {
		if p, err := filepath.EvalSymlinks(filepath.Join("/usr/lib/x86_64-linux-gnu", lib)); err == nil {
			paths = append(paths, p)
		}
	}
	opened := 0
	for _, p := range paths {
		for _, plt := range []bool{false, true} {
			opt := Options{LazyDWARF: true, MapFiles: true, DyninstPLTNames: plt}
			want, err := Open(p, opt)
			if err != nil {
				continue // not an ELF file of these (a cubin directory's notes)
			}
			opened++
			m := &mapMemo{}
			opt.Memo = m
			first, err := Open(p, opt)
			if err != nil || m.puts != 1 || m.hits != 0 {
				t.Fatalf("%s: first opening with a memo: %v, %d stored, %d read", p, err, m.puts, m.hits)
			}
			got, err := Open(p, opt)
			if err != nil || m.hits != 1 || m.puts != 1 {
				t.Fatalf("%s: second opening: %v, %d stored, %d read", p, err, m.puts, m.hits)
			}
			for i, w := range symbolFields(want) {
				if f := symbolFields(first)[i]; !reflect.DeepEqual(f, w) {
					t.Errorf("%s (plt names %v): field %d as read with a memo differs: %v, want %v", p, plt, i, f, w)
				}
				if g := symbolFields(got)[i]; !reflect.DeepEqual(g, w) {
					t.Errorf("%s (plt names %v): field %d from the memo differs", p, plt, i)
				}
			}
		}
	}
	if opened < 200 {
		t.Fatalf("only %d openings", opened)
	}
	t.Logf("%d binaries, each with and without Dyninst's PLT names", opened/2)
}

// TestSymbolsMemoDamaged: stored tables that do not decode are read from
// the file again, and stored anew.
func TestSymbolsMemoDamaged(t *testing.T) {
	const p = "../testdata/bin/loops-gcc12-O2"
	opt := Options{LazyDWARF: true, MapFiles: true}
	want, err := Open(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	m := &mapMemo{}
	opt.Memo = m
	if _, err := Open(p, opt); err != nil {
		t.Fatal(err)
	}
	good := m.m[symbolsKind(opt)]
	for _, bad := range [][]byte{good[:len(good)-1], append(bytes.Clone(good), 0), []byte("bloop loader symbols 0\n")} {
		m.m[symbolsKind(opt)] = bad
		got, err := Open(p, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(symbolFields(got), symbolFields(want)) {
			t.Errorf("damaged tables (%d bytes): the image differs from the file's", len(bad))
		}
		if !bytes.Equal(m.m[symbolsKind(opt)], good) {
			t.Errorf("damaged tables (%d bytes): not stored anew", len(bad))
		}
	}
}

// FuzzDecodeSymbols: stored tables are input too (a disk can corrupt
// them): any bytes decode or give an error, and what decodes encodes to
// bytes that decode to the same tables.
func FuzzDecodeSymbols(f *testing.F) {
	for _, p := range []string{"../testdata/bin/loops-gcc12-O2", "../testdata/bin-ppc64le/loops-gcc12-O2"} {
		m := &mapMemo{}
		if _, err := Open(p, Options{LazyDWARF: true, Memo: m}); err == nil {
			for _, b := range m.m {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(symbolsMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeSymbols(b)
		if err != nil {
			return
		}
		s2, err := decodeSymbols(encodeSymbols(s))
		if err != nil {
			t.Fatalf("decoded tables do not decode once stored again: %v", err)
		}
		if !reflect.DeepEqual(s, s2) {
			t.Fatal("tables change when stored and decoded again")
		}
	})
}
