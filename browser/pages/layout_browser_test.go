package pages

import (
	"fmt"
	"testing"

	"bloop/browser/browsertest"
	"bloop/internal/viewtest"
)

// bottoms reads the bottom edge of each element a selector names (-1:
// none) and the window's height.
func bottoms(t *testing.T, tb *tab, sels []string) ([]float64, float64) {
	t.Helper()
	list := "["
	for _, s := range sels {
		list += fmt.Sprintf("%q,", s)
	}
	list += "]"
	got := eval[[]float64](tb, list+`.map(s => { const e = document.querySelector(s); return e ? e.getBoundingClientRect().bottom : -1 })`)
	return got, eval[float64](tb, `window.innerHeight`)
}

// TestPanesFillWindow: in a 1600x1000 window the panes of the structure,
// diff and report pages reach the window's bottom (they stopped half-way
// down, leaving the rest blank), their scrolling parts too.
func TestPanesFillWindow(t *testing.T) {
	browsertest.Need(t)
	struc, _ := writeStruct(t, testdata+"/bin/loops-gcc12-O2")
	pages := []struct {
		name, page string
		sels       []string
	}{
		{"struct", struc, []string{".tables-pane", ".tables-pane .scroll", ".source-pane", ".source-pane .src-body"}},
		{"diff", writeDiffPage(t, diffO2, diffO3, repoSources), []string{".procs-pane", ".diff-right", ".diff-source .src-body"}},
		{"report", writeTestPage(t, viewtest.Synthetic(), testSources), []string{".tables-pane .scroll", ".source-pane .src-body"}},
	}
	for _, p := range pages {
		tb := openPage(t, p.page)
		got, h := bottoms(t, tb, p.sels)
		if h != browsertest.Height {
			t.Errorf("%s: the window is %.0f high, want %d", p.name, h, browsertest.Height)
		}
		for i, s := range p.sels {
			// The panes' padding and borders are a few pixels.
			if got[i] < h-16 || got[i] > h {
				t.Errorf("%s page: %s ends at %.0f px, want the window's bottom (%.0f)", p.name, s, got[i], h)
			}
		}
		tb.Screenshot("layout-" + p.name + ".png")
	}
}
