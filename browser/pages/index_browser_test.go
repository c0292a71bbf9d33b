package pages

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bloop/browser/browsertest"
	"bloop/view"
)

// TestIndexPage: an index of structure pages (bloop struct --format html
// of a measurement directory writes one) opens in the browser, as does
// a page it links to, and its links resolve to the pages beside it; a
// module without a page is listed with why.
func TestIndexPage(t *testing.T) {
	browsertest.Need(t)
	dir := t.TempDir()
	var entries []view.IndexEntry
	for _, bin := range []string{"hot-gcc12-O2", "loops-gcc12-O2"} {
		page, _ := writeStruct(t, testdata+"/bin/"+bin)
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, bin+".html"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, view.IndexEntry{Name: "/opt/" + bin, Link: bin + ".html"})
	}
	entries = append(entries, view.IndexEntry{Name: "libm.so.6", Note: "more than 2000 scopes"})
	var buf bytes.Buffer
	if err := view.WriteIndex(&buf, "bloop struct: <meas>", entries); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "index.html")
	if err := os.WriteFile(index, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	tb := openPage(t, filepath.Join(dir, "loops-gcc12-O2.html"))
	labels := eval[[]string](tb, `[...document.querySelectorAll('table.stree tbody tr .label')].map(e => e.textContent)`)
	if len(labels) < 2 || labels[0] != "loops-gcc12-O2" {
		t.Errorf("the page shows %q", labels)
	}
	ix := browsertest.OpenStatic(t, index)
	links := eval[[]string](ix, `[...document.querySelectorAll('ol.index a')].map(a => a.href)`)
	want := []string{"file://" + filepath.Join(dir, "hot-gcc12-O2.html"), "file://" + filepath.Join(dir, "loops-gcc12-O2.html")}
	slices.Sort(links)
	if !slices.Equal(links, want) {
		t.Errorf("the index links to %q, want %q", links, want)
	}
	if h := eval[string](ix, `document.querySelector('h1').textContent`); h != "bloop struct: <meas>" {
		t.Errorf("the index's heading: %q", h)
	}
	if n := eval[string](ix, `document.querySelector('ol.index li:last-child').textContent`); !strings.Contains(n, "libm.so.6") || !strings.Contains(n, "more than 2000 scopes") {
		t.Errorf("the module without a page: %q", n)
	}
}
