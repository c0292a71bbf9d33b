package procs

import (
	"path/filepath"
	"testing"

	"bloop/loader"
)

// TestInferredBounds strips corpus binaries of everything but their code
// sections, PLT stubs and exception tables (no entry point, FDEs or
// constructor tables either), so that the starts come from call targets
// and the paper's rules alone, and checks them against the symbol table.
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
			bare := loader.FromSections(img.Arch, img.Sections, nil)
			bare.CallSites = img.CallSites
			for _, f := range img.Funcs {
				if f.PLT {
					bare.Funcs = append(bare.Funcs, f)
				}
			}
			found, right := 0, 0
			for _, p := range Find(bare, Options{}).Procs {
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
