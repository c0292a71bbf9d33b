package view

import (
	"os"
	"sort"
	"testing"

	"bloop/internal/browsertest"
)

// The pages are tested in a real browser (internal/browsertest): one
// browser for the whole test binary, each page in its own tab.

type tab = browsertest.Tab

func chromiumPath() string { return browsertest.Chromium() }

// openPage opens an HTML file from disk and waits until it has rendered;
// the test fails if the page asks the network for anything or reports
// an error.
func openPage(t *testing.T, path string) *tab { return browsertest.Open(t, path) }

// eval evaluates a JavaScript expression in the page into a T.
func eval[T any](tb *tab, expr string) T {
	tb.T.Helper()
	return browsertest.Eval[T](tb, expr)
}

func TestMain(m *testing.M) {
	code := m.Run()
	browsertest.Close()
	os.Exit(code)
}

// TestFirstRender measures the page named by $BLOOP_VIEW_PAGE (the
// figures of docs/pages.md): its size and the median of five times from the
// start of navigation to its first rendered frame, each in a new tab.
func TestFirstRender(t *testing.T) {
	page := os.Getenv("BLOOP_VIEW_PAGE")
	if page == "" {
		t.Skip("set BLOOP_VIEW_PAGE to an HTML page to measure")
	}
	st, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	var ms []float64
	for i := 0; i < 5; i++ {
		ms = append(ms, openPage(t, page).Ready)
	}
	sort.Float64s(ms)
	t.Logf("%s: %d bytes, first render in %.0f ms (median of %v)", page, st.Size(), ms[2], ms)
}
