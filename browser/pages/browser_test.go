// Package pages tests bloop's HTML pages in a real browser
// (browsertest): one browser for the whole test binary, each page in its
// own tab. The pages are made through view's API, from the inputs view's
// own tests use (bloop/internal/viewtest).
package pages

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"bloop/browser/browsertest"
	"bloop/view"
)

type tab = browsertest.Tab

// openPage opens an HTML file from disk and waits until it has rendered;
// the test fails if the page asks the network for anything or reports
// an error.
func openPage(t *testing.T, path string) *tab {
	t.Helper()
	return browsertest.Open(t, path)
}

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

// The repository's test inputs, from this directory.
const (
	repo      = "../.."
	viewData  = repo + "/view/testdata"
	testdata  = repo + "/testdata"
	goldenDir = testdata + "/golden"
)

// The synthetic profile's sources, and the corpus programs' (their
// DWARF names them /src/...).
var (
	testSources = view.Options{Replace: []view.Replacement{{Old: "/src", New: viewData + "/src"}}}
	// (System headers are left out: whether they exist varies.)
	repoSources = view.Options{Replace: []view.Replacement{{Old: "/src", New: testdata + "/src"}, {Old: "/usr/include", New: "/nonexistent"}}}
)

// writeFile writes a page into the test's directory and returns its path.
func writeFile(t *testing.T, name string, page []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var dataRE = regexp.MustCompile(`(?s)<script type="application/json" id="bloop-data">(.*?)</script>`)

// pageData returns the data a page embeds.
func pageData(t *testing.T, page []byte) []byte {
	t.Helper()
	m := dataRE.FindSubmatch(page)
	if m == nil {
		t.Fatal("no page data")
	}
	return bytes.Clone(m[1])
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
