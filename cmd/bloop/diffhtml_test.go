package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"bloop/internal/schematest"
	"bloop/schema"
)

// pageData returns the data a page embeds, checked against its schema.
func pageData(t *testing.T, path, schemaName string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="bloop-data">(.*?)</script>`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no page data", path)
	}
	if err := schematest.ValidateJSON(schemaName, m[1]); err != nil {
		t.Errorf("%s: %v", path, err)
	}
	var d map[string]any
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDiffHTML: --html writes the page as well as the report, which is
// what it is without --html, with the exit codes diff has; the page's
// data follows schema/diff-page-v1.json; --proc keeps what it matches.
func TestDiffHTML(t *testing.T) {
	a, b := goldenFile(t, "inline-gcc12-O2"), goldenFile(t, "inline-gcc12-O3")
	dir := t.TempDir()
	page := filepath.Join(dir, "d.html")
	src := "/src=" + filepath.Join(goldenDir, "../src")
	for _, asJSON := range []bool{false, true} {
		var flags []string
		if asJSON {
			flags = []string{"--json"}
		}
		_, plain, _ := diffCaptured(t, append(flags, a, b)...)
		code, out, errs := diffCaptured(t, append(flags, "--html", page, "-R", src, a, b)...)
		if code != 1 || errs != "" || out != plain {
			t.Fatalf("--html %v: exit %d, stderr %q; the report changed: %v", flags, code, errs, out != plain)
		}
	}
	d := pageData(t, page, schema.DiffPage)
	procs := d["pairs"].([]any)[0].(map[string]any)["procs"].([]any)
	files := d["files"].([]any)
	if len(procs) != 2 || !strings.Contains(files[0].(map[string]any)["text"].(string), "inline_poly") {
		t.Errorf("the page: %d procedures, sources %v", len(procs), files)
	}
	// Equal files: exit 0, and a page saying so.
	code, _, errs := diffCaptured(t, "--html", page, a, a)
	if d := pageData(t, page, schema.DiffPage); code != 0 || errs != "" || len(d["pairs"].([]any)[0].(map[string]any)["procs"].([]any)) != 0 {
		t.Errorf("equal files: exit %d, %q", code, errs)
	}
	code, _, errs = diffCaptured(t, "--html", page, "--proc", "^main$", a, b)
	d = pageData(t, page, schema.DiffPage)
	if code != 1 || errs != "" || d["proc"] != "^main$" || len(d["pairs"].([]any)[0].(map[string]any)["procs"].([]any)) != 1 {
		t.Errorf("--proc: exit %d, %q", code, errs)
	}
}

// TestDiffHTMLDirs: two directories make one page with the pairs that
// differ, and the files only on one side.
func TestDiffHTMLDirs(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	copyFile(t, goldenFile(t, "inline-gcc12-O2"), filepath.Join(a, "bin/inline.hpcstruct"))
	copyFile(t, goldenFile(t, "inline-gcc12-O3"), filepath.Join(b, "bin/inline.hpcstruct"))
	copyFile(t, goldenFile(t, "loops-gcc12-O2"), filepath.Join(a, "loops.hpcstruct"))
	copyFile(t, goldenFile(t, "loops-clang14-O2"), filepath.Join(b, "loops.hpcstruct"))
	copyFile(t, goldenFile(t, "hot-gcc12-O2"), filepath.Join(a, "same.hpcstruct"))
	copyFile(t, goldenFile(t, "hot-gcc12-O2"), filepath.Join(b, "same.hpcstruct"))
	copyFile(t, goldenFile(t, "recur-gcc12-O2"), filepath.Join(a, "old/recur.hpcstruct"))
	page := filepath.Join(tmp, "dirs.html")
	_, plain, _ := diffCaptured(t, a, b)
	code, out, errs := diffCaptured(t, "--html", page, a, b)
	if code != 1 || errs != "" || out != plain {
		t.Fatalf("exit %d, stderr %q, the report changed: %v", code, errs, out != plain)
	}
	d := pageData(t, page, schema.DiffPage)
	var paths []string
	for _, p := range d["pairs"].([]any) {
		paths = append(paths, p.(map[string]any)["path"].(string))
	}
	totals := d["totals"].(map[string]any)
	if strings.Join(paths, " ") != "bin/inline.hpcstruct loops.hpcstruct" || totals["pairs"] != 3.0 || totals["only_in_a"] != 1.0 {
		t.Errorf("pairs %q, totals %v", paths, totals)
	}
	if only := d["only_in_a"].([]any); len(only) != 1 || only[0] != "old/recur.hpcstruct" {
		t.Errorf("only in a: %v", only)
	}
}

// TestDiffHTMLRefused: a page over the bound is refused in one line
// naming --proc, with exit 2 and no file; --proc needs --html.
func TestDiffHTMLRefused(t *testing.T) {
	a, b := goldenFile(t, "inline-gcc12-O2"), goldenFile(t, "inline-gcc12-O3")
	page := filepath.Join(t.TempDir(), "d.html")
	pageMaxScopes = 50 // main alone is 40 nodes, with inline_poly 69
	t.Cleanup(func() { pageMaxScopes = 0 })
	code, out, errs := diffCaptured(t, "--html", page, a, b)
	if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "--proc REGEXP") || !strings.Contains(out, "2 procedures differ") {
		t.Errorf("too large: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(page); err == nil {
		t.Error("a page was written")
	}
	// What --proc keeps fits.
	if code, _, errs := diffCaptured(t, "--html", page, "--proc", "^main$", a, b); code != 1 || errs != "" {
		t.Errorf("--proc ^main$ under the bound: exit %d, %q", code, errs)
	}
	pageMaxScopes = 0
	for _, args := range [][]string{{"--proc", "main", a, b}, {"--html", page, "--proc", "(", a, b}} {
		if code, _, errs := diffCaptured(t, args...); code != 2 || strings.Count(errs, "\n") != 1 {
			t.Errorf("%q: exit %d, %q", args, code, errs)
		}
	}
}
