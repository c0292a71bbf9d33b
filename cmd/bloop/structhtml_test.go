package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStructHTML: --format html writes <base>.html (no cache entry: the
// page is made from the analysis), --proc keeps the procedures it
// matches, and the formats hpcprof cannot read are refused for
// measurement directories and -M, and --proc without html.
func TestStructHTML(t *testing.T) {
	bin, _ := filepath.Abs("../../testdata/bin/loops-gcc12-O2")
	dir := t.TempDir()
	t.Chdir(dir)
	cache := filepath.Join(dir, "cache")
	code, _, msg := captured(t, runStruct, "-q", "-c", cache, "--format", "html", "-R", "/src="+filepath.Join(filepath.Dir(bin), "../src"), bin)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	b, err := os.ReadFile("loops-gcc12-O2.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`id="bloop-data"`, `"procs":16`, `for (int k = 0; k \u003c n; k++)`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("the page lacks %q", s)
		}
	}
	if n := cacheFiles(t, cache); n != 0 {
		t.Errorf("%d cache entries for an HTML page", n)
	}
	code, _, msg = captured(t, runStruct, "-q", "--nocache", "--format", "html", "--proc", "^matmul$", "-o", "m.html", bin)
	b, _ = os.ReadFile("m.html")
	if code != 0 || !strings.Contains(string(b), `"procs":1,`) {
		t.Errorf("--proc: exit %d %s", code, msg)
	}
	for _, args := range [][]string{
		{"--format", "html", "-M", dir, bin},
		{"--proc", "x", bin},
		{"--format", "html", "--proc", "(", bin},
	} {
		code, _, msg := captured(t, runStruct, append([]string{"-q", "--nocache"}, args...)...)
		if code != 2 || strings.Count(msg, "\n") != 1 {
			t.Errorf("%q: exit %d, %q; want 2 and one line", args, code, msg)
		}
	}
}
