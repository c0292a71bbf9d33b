package loader

import (
	"debug/elf"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
)

// TestStrippedHints checks what the loader reads for procedures without
// symbols: the entry point is _start, the constructor tables hold
// frame_dummy and __do_global_dtors_aux, .dynamic names _init and _fini
// (DT_INIT, DT_FINI), and every sized function of
// the compiler's has an FDE starting at it. The "slots zeroed" copies
// clear .init_array and .fini_array in the file, as linkers may for PIE:
// the addresses must then come from the RELATIVE relocations.
func TestStrippedHints(t *testing.T) {
	cases := []struct {
		bin         string
		zeroSlots   bool
		wantFrameAt []string // functions that must begin an FDE
	}{
		{"loops-gcc12-O2", false, []string{"main", "init", "matmul"}},
		{"loops-gcc12-O2", true, []string{"main"}},
		{"loops-clang14-O2", false, []string{"main"}},
		{"tmpl-gcc12-O2", false, []string{"main", "main.cold"}},
		{"libinline-gcc12-O2.so", false, []string{"inline_kernel"}},
	}
	for _, c := range cases {
		name := c.bin
		if c.zeroSlots {
			name += " slots zeroed"
		}
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(corpus, c.bin)
			syms := symbolValues(t, path)
			if c.zeroSlots {
				path = zeroInitSlots(t, path)
			}
			img, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if want := syms["_start"]; img.Entry != want {
				t.Errorf("entry %#x, want _start %#x", img.Entry, want)
			}
			want := []uint64{syms["frame_dummy"], syms["__do_global_dtors_aux"], syms["_init"], syms["_fini"]}
			sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
			if !reflect.DeepEqual(img.InitFuncs, want) {
				t.Errorf("init and fini functions %#x, want %#x", img.InitFuncs, want)
			}
			starts := map[uint64]bool{}
			for i, r := range img.Frames {
				starts[r.Lo] = true
				if r.Hi <= r.Lo || i > 0 && r.Lo < img.Frames[i-1].Lo || !img.IsCode(r.Lo) {
					t.Errorf("bad or unsorted frame %#x-%#x", r.Lo, r.Hi)
				}
			}
			for _, fn := range c.wantFrameAt {
				if a, ok := syms[fn]; !ok || !starts[a] {
					t.Errorf("no FDE at %s (%#x)", fn, a)
				}
			}
		})
	}
}

// symbolValues maps the symbol names of path to their values.
func symbolValues(t *testing.T, path string) map[string]uint64 {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, s := range syms {
		out[s.Name] = s.Value
	}
	if _, ok := out["_start"]; !ok {
		out["_start"] = 0 // a shared library: e_entry is 0
	}
	return out
}

// zeroInitSlots copies path with the bytes of its constructor tables
// cleared.
func zeroInitSlots(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Type == elf.SHT_INIT_ARRAY || s.Type == elf.SHT_FINI_ARRAY {
			clear(b[s.Offset : s.Offset+s.Size])
		}
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
