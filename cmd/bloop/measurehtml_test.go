package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bloop/internal/browsertest"
	"bloop/meas"
	"bloop/schema"
)

// problems drops the line saying that libmonitor (not on this machine)
// was skipped.
func problems(errs string) string {
	var out []string
	for _, l := range strings.SplitAfter(errs, "\n") {
		if l != "" && !strings.Contains(l, ": skipped ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestStructMeasurementDirHTML: --format html on a measurement directory
// writes a structure page per module into html/ (-o: another directory)
// and an index linking them, and leaves structs/ to hpcprof; a module
// too large for a page is one line naming --proc, the others are still
// written, and the exit status is 1. A page and the index open in
// Chromium, whose links resolve to the pages beside it.
func TestStructMeasurementDirHTML(t *testing.T) {
	dir, _ := measDir(t)
	if code, _, errs := captured(t, runStruct, "-q", "--nocache", "--format", "html", dir); code != 0 || problems(errs) != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	pages := filepath.Join(dir, "html")
	if got := dirNames(t, pages); strings.Join(got, " ") != "index.html libm.so.6.html prog.html" {
		t.Errorf("html/ holds %q", got)
	}
	if _, err := os.Stat(meas.StructsDir(dir)); err == nil || len(meas.StructFiles(dir)) != 0 {
		t.Errorf("structs/ was made: %v", dirNames(t, meas.StructsDir(dir)))
	}
	d := pageData(t, filepath.Join(pages, "prog.html"), schema.StructPage)
	if !strings.HasSuffix(d["module"].(string), "/opt/demo/prog") {
		t.Errorf("prog's page is of module %v", d["module"])
	}

	// Past the bound: libm is refused, prog is still written.
	out := filepath.Join(t.TempDir(), "pages")
	pageMaxScopes = 2000
	code, _, errs := captured(t, runStruct, "-q", "--nocache", "--format", "html", "-o", out, dir)
	errs = problems(errs)
	pageMaxScopes = 0
	if code != 1 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "libm.so.6: more than 2000 scopes") || !strings.Contains(errs, "--proc REGEXP") {
		t.Errorf("a module too large: exit %d, %q", code, errs)
	}
	if got := dirNames(t, out); strings.Join(got, " ") != "index.html prog.html" {
		t.Errorf("-o %s holds %q", out, got)
	}
	index, _ := os.ReadFile(filepath.Join(out, "index.html"))
	if !strings.Contains(string(index), `href="./prog.html"`) || !strings.Contains(string(index), "more than 2000 scopes") {
		t.Errorf("the index:\n%s", index)
	}

	if browsertest.Chromium() == "" {
		t.Skip("no chromium binary (apt-get install chromium)")
	}
	tb := browsertest.Open(t, filepath.Join(pages, "prog.html"))
	labels := browsertest.Eval[[]string](tb, `[...document.querySelectorAll('table.stree tbody tr .label')].map(e => e.textContent)`)
	if len(labels) < 2 || !strings.HasSuffix(labels[0], "prog") {
		t.Errorf("prog's page shows %q", labels)
	}
	tb.Screenshot("meas-prog.png")
	ix := browsertest.OpenStatic(t, filepath.Join(pages, "index.html"))
	links := browsertest.Eval[[]string](ix, `[...document.querySelectorAll('ol.index a')].map(a => a.href)`)
	want := []string{"file://" + filepath.Join(pages, "libm.so.6.html"), "file://" + filepath.Join(pages, "prog.html")}
	slices.Sort(links)
	if !slices.Equal(links, want) {
		t.Errorf("the index links to %q, want %q", links, want)
	}
}
