package unwind

import (
	"os"
	"path/filepath"
	"testing"

	"bloop/loader"
)

// TestInferredBounds strips the symbols from corpus binaries (an image of
// their code sections and PLT stubs only) and checks that inference finds the procedure
// starts the symbol table had.
func TestInferredBounds(t *testing.T) {
	cases := []struct {
		bin        string
		minRecall  float64 // share of symbol starts found
		minPrecise float64 // share of inferred starts that are symbol starts
	}{
		{"loops-gcc12-O2", 0.9, 0.9},
		{"loops-clang14-O2", 0.9, 0.9},
		{"noreturn-gcc12-O2", 0.9, 0.8},
		{"tmpl-gcc12-O2", 0.9, 0.8},
		{"tmpl-clang14-O2", 0.9, 0.8},
		{"recur-gcc12-O3", 0.9, 0.9},
	}
	for _, c := range cases {
		t.Run(c.bin, func(t *testing.T) {
			img, err := loader.Open(filepath.Join("../testdata/bin", c.bin), loader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := map[uint64]bool{}
			for _, f := range img.Funcs {
				if sec := img.SectionAt(f.Addr); !f.PLT && sec != nil && sec.Name == ".text" {
					want[f.Addr] = true
				}
			}
			// What strip leaves: the code, the PLT stubs' names and the
			// exception tables.
			stripped := loader.FromSections(img.Arch, img.Sections, nil)
			stripped.CallSites = img.CallSites
			for _, f := range img.Funcs {
				if f.PLT {
					stripped.Funcs = append(stripped.Funcs, f)
				}
			}
			bare := NewModule(stripped)
			found, right := 0, 0
			for _, p := range bare.Procs() {
				if sec := img.SectionAt(p.Lo); sec == nil || sec.Name != ".text" {
					continue
				}
				found++
				if want[p.Lo] {
					right++
				}
			}
			recall, precision := float64(right)/float64(len(want)), float64(right)/float64(max(found, 1))
			t.Logf("%d symbol starts, %d inferred, %d right: recall %.2f, precision %.2f", len(want), found, right, recall, precision)
			if recall < c.minRecall || precision < c.minPrecise {
				t.Errorf("recall %.2f (want >= %.2f), precision %.2f (want >= %.2f)", recall, c.minRecall, precision, c.minPrecise)
			}
		})
	}
}

// TestLibcBounds compares the procedure starts of the stripped system libc
// (dynamic symbols plus inference) with the FDE starts of its .eh_frame.
func TestLibcBounds(t *testing.T) {
	const path = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	if _, err := os.Stat(path); err != nil || testing.Short() {
		t.Skip("no libc.so.6, or -short")
	}
	img, err := loader.Open(path, loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fdes, err := ehTable(path)
	if err != nil {
		t.Fatal(err)
	}
	m := NewModule(img)
	starts := map[uint64]bool{}
	inferred := 0
	for _, p := range m.Procs() {
		starts[p.Lo] = true
		if p.Inferred {
			inferred++
		}
	}
	hit := 0
	for _, f := range fdes {
		if starts[f.Begin()] {
			hit++
		}
	}
	t.Logf("%d procedures (%d inferred); %d of %d FDE starts are procedure starts (%.1f%%)",
		len(m.Procs()), inferred, hit, len(fdes), 100*float64(hit)/float64(len(fdes)))
}
