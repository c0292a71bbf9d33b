package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
// written, and the exit status is 1. (That an index and its pages open
// in a browser is browser/pages' TestIndexPage.)
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
}
