package loader

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestInlineChainUntil: the chain InlineChainUntil returns is InlineChain's,
// and InlineChain gives that same chain at every address below the bound.
func TestInlineChainUntil(t *testing.T) {
	bins, _ := filepath.Glob("../testdata/bin/*-O[23]")
	checked := 0
	for _, bin := range bins {
		img, err := Open(bin, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range img.Procs {
			if len(p.Inlines) == 0 {
				continue
			}
			for _, r := range p.Ranges {
				for a := r.Lo; a < r.Hi; {
					chain, until := p.InlineChainUntil(a, nil)
					if want := p.InlineChain(a, nil); !slices.Equal(chain, want) {
						t.Fatalf("%s %s %#x: chain %d long, want %d", bin, p.Name, a, len(chain), len(want))
					}
					if until <= a {
						t.Fatalf("%s %s %#x: bound %#x not above the address", bin, p.Name, a, until)
					}
					end := min(until, r.Hi)
					for b := a + 1; b < end; b++ {
						if !slices.Equal(p.InlineChain(b, nil), chain) {
							t.Fatalf("%s %s: chain changes at %#x, below the bound %#x given at %#x", bin, p.Name, b, until, a)
						}
					}
					checked++
					a = end
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d chains checked", checked)
	}
}
