package diff

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/structure"
)

// corpusDir holds the structure files bloop struct writes for the
// corpus binaries (XML and JSON; pipeline's corpus test keeps them so).
const corpusDir = "../testdata/golden"

// src is the content of one file of a test tree: a corpus structure
// file (cut to its first cut bytes when cut > 0; with the first old
// replaced by new), or literal text.
type src struct {
	corpus   string
	cut      int
	old, new string
	text     string
}

func corpus(name string) src { return src{corpus: name} }
func text(s string) src      { return src{text: s} }

func (s src) bytes(t *testing.T) []byte {
	t.Helper()
	if s.corpus == "" {
		return []byte(s.text)
	}
	data, err := os.ReadFile(filepath.Join(corpusDir, s.corpus))
	if err != nil {
		t.Fatalf("corpus structure file missing: %v", err)
	}
	if s.old != "" {
		if !bytes.Contains(data, []byte(s.old)) {
			t.Fatalf("%s has no %q", s.corpus, s.old)
		}
		data = bytes.Replace(data, []byte(s.old), []byte(s.new), 1)
	}
	if s.cut > 0 {
		data = data[:s.cut]
	}
	return data
}

// writeTree makes the files of spec (relative path -> content) under dir.
func writeTree(t *testing.T, dir string, spec map[string]src) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for rel, s := range spec {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, s.bytes(t), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The gcc 12 and clang 14 -O2 builds of three corpus programs, one of
// them a shared library, in nested directories; a JSON and an XML form.
var (
	gccBuild = map[string]src{
		"loops.hpcstruct":            corpus("loops-gcc12-O2.hpcstruct"),
		"lib/libinline.so.hpcstruct": corpus("libinline-gcc12-O2.so.hpcstruct"),
		"sub/deep/irred.json":        corpus("irred-gcc12-O2.json"),
	}
	clangBuild = map[string]src{
		"loops.hpcstruct":            corpus("loops-clang14-O2.hpcstruct"),
		"lib/libinline.so.hpcstruct": corpus("libinline-clang14-O2.so.hpcstruct"),
		"sub/deep/irred.json":        corpus("irred-clang14-O2.json"),
	}
	// Files of a build tree that are not structure files.
	others = map[string]src{
		"README":                text("not a structure file\n"),
		"manifest.jsonl":        text(`{"version":1,"path":"bin/loops","outcome":"written"}` + "\n"),
		"html/index.html":       text("<!DOCTYPE html>\n<html><body></body></html>\n"),
		"lib/libinline.so":      text("\x7fELF\x02\x01\x01"),
		"compile_commands.json": text("[]\n"),
		"empty":                 text(""),
	}
)

func merge(ms ...map[string]src) map[string]src {
	out := map[string]src{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

var dirCases = []struct {
	name string
	a, b map[string]src
	opts DiffOptions
	want DirTotals // Summary not compared: the goldens hold it
	// errs: the start of each error message, in order (operand names
	// as "a" and "b").
	errs []string
}{
	{
		name: "identical",
		a:    gccBuild,
		b:    merge(gccBuild, others),
		want: DirTotals{Pairs: 3, Ignored: 6},
	},
	{
		name: "gcc-vs-clang",
		a:    merge(gccBuild, map[string]src{"old/stl.hpcstruct": corpus("stl-gcc12-O2.hpcstruct")}),
		b:    merge(clangBuild, others, map[string]src{"new/tmpl.json": corpus("tmpl-clang14-O2.json")}),
		want: DirTotals{Pairs: 3, PairsDiffer: 3, OnlyInA: 1, OnlyInB: 1, Ignored: 6},
	},
	{
		name: "gcc-vs-clang-addresses",
		a:    gccBuild,
		b:    clangBuild,
		opts: DiffOptions{Addresses: true},
		want: DirTotals{Pairs: 3, PairsDiffer: 3},
	},
	{
		// The same structures, XML in one tree and JSON in the other,
		// under the same names: recognised by content, and equal.
		name: "xml-vs-json",
		a: map[string]src{
			"loops":                 corpus("loops-gcc12-O2.hpcstruct"),
			"x/libinline.so.struct": corpus("libinline-clang14-O2.so.hpcstruct"),
			"x/y/stl":               corpus("stl-clang14-O3.json"),
		},
		b: map[string]src{
			"loops":                 corpus("loops-gcc12-O2.json"),
			"x/libinline.so.struct": corpus("libinline-clang14-O2.so.json"),
			"x/y/stl":               corpus("stl-clang14-O3.hpcstruct"),
		},
		opts: DiffOptions{Addresses: true},
		want: DirTotals{Pairs: 3},
	},
	{
		// Malformed files (a truncated XML file, a JSON line number that
		// is negative) are errors naming FILE:LINE; the other pairs are
		// still diffed.
		name: "malformed",
		a:    merge(gccBuild, map[string]src{"bad.json": corpus("hot-gcc12-O2.json")}),
		b: merge(clangBuild, map[string]src{
			"loops.hpcstruct": {corpus: "loops-clang14-O2.hpcstruct", cut: 3000},
			"bad.json":        {corpus: "hot-gcc12-O2.json", old: `"line": 1`, new: `"line": -1`},
		}),
		want: DirTotals{Pairs: 2, PairsDiffer: 2, Errors: 2},
		errs: []string{"b/bad.json:", "b/loops.hpcstruct:"},
	},
	{
		// A name that is a structure file in a only: only in a, and b's
		// file is ignored.
		name: "one-side-not-structure",
		a:    map[string]src{"loops.hpcstruct": corpus("loops-gcc12-O2.hpcstruct"), "same.json": corpus("hot-gcc12-O2.json")},
		b:    map[string]src{"loops.hpcstruct": text("<html></html>\n"), "same.json": corpus("hot-gcc12-O2.json")},
		want: DirTotals{Pairs: 1, OnlyInA: 1, Ignored: 1},
	},
	{
		name: "empty",
		a:    map[string]src{},
		b:    others,
		want: DirTotals{Ignored: 6},
	},
}

// TestDiffDirs diffs trees of corpus structure files and compares the
// text and JSON reports with golden files (go test -update rewrites them).
func TestDiffDirs(t *testing.T) {
	for _, c := range dirCases {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
			writeTree(t, a, c.a)
			writeTree(t, b, c.b)
			r, err := DiffDirs(a, b, c.opts, 4)
			if err != nil {
				t.Fatal(err)
			}
			got := r.Totals
			got.Summary = Summary{}
			if got != c.want {
				t.Errorf("totals\n got %+v\nwant %+v", got, c.want)
			}
			if r.Equal() != (c.want.PairsDiffer+c.want.OnlyInA+c.want.OnlyInB == 0) {
				t.Errorf("Equal() = %v", r.Equal())
			}
			if len(r.Errors) != len(c.errs) {
				t.Errorf("errors %+v, want %d", r.Errors, len(c.errs))
			}
			for i, e := range r.Errors {
				if i < len(c.errs) && !strings.HasPrefix(strings.TrimPrefix(e.Message, tmp+"/"), c.errs[i]) {
					t.Errorf("error %d: %q, want it to start with %q", i, e.Message, c.errs[i])
				}
			}
			// Each pair's report is Diff's report of the two files.
			var sum Summary
			for _, p := range r.Pairs {
				da, errA := structure.ParseFile(filepath.Join(a, p.Path))
				db, errB := structure.ParseFile(filepath.Join(b, p.Path))
				if errA != nil || errB != nil {
					t.Fatalf("%s: %v %v", p.Path, errA, errB)
				}
				want := Diff(da, db, c.opts)
				var x, y bytes.Buffer
				want.WriteJSON(&x)
				p.Report.WriteJSON(&y)
				if !bytes.Equal(x.Bytes(), y.Bytes()) || p.Equal != want.Equal() {
					t.Errorf("%s: pair report is not Diff's", p.Path)
				}
				sum.add(want.Summary)
			}
			if sum != r.Totals.Summary {
				t.Errorf("totals %+v, want the sum of the pairs' %+v", r.Totals.Summary, sum)
			}
			// The same report whatever the number of jobs.
			r1, err := DiffDirs(a, b, c.opts, 1)
			if err != nil {
				t.Fatal(err)
			}
			var js, js1, txt bytes.Buffer
			if err := r.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			r1.WriteJSON(&js1)
			if !bytes.Equal(js.Bytes(), js1.Bytes()) {
				t.Errorf("reports with 4 jobs and 1 differ")
			}
			if err := r.WriteText(&txt); err != nil {
				t.Fatal(err)
			}
			// The operands as "a" and "b", for the goldens.
			strip := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(tmp+"/"), nil) }
			checkGolden(t, filepath.Join("dirdiff", c.name+".txt"), strip(txt.Bytes()))
			checkGolden(t, filepath.Join("dirdiff", c.name+".json"), strip(js.Bytes()))
			var back DirReport
			if err := json.Unmarshal(js.Bytes(), &back); err != nil {
				t.Fatalf("JSON report does not read back: %v", err)
			}
			if back.Totals != r.Totals || len(back.Pairs) != len(r.Pairs) {
				t.Errorf("JSON report reads back as totals %+v, %d pairs", back.Totals, len(back.Pairs))
			}
		})
	}
}

// TestDiffDirsText: the text report's lines for the gcc and clang trees.
func TestDiffDirsText(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	writeTree(t, a, merge(gccBuild, map[string]src{"old/stl.hpcstruct": corpus("stl-gcc12-O2.hpcstruct")}))
	writeTree(t, b, merge(clangBuild, others))
	r, err := DiffDirs(a, b, DiffOptions{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := r.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	// Header, three pairs and one file only in a in path order, a blank
	// line, the totals.
	prefixes := []string{"--- a: ", "+++ b: ", "lib/libinline.so.hpcstruct: ", "loops.hpcstruct: ",
		"only in a: old/stl.hpcstruct", "sub/deep/irred.json: ", "", "totals: 3 pairs compared, 3 differ, 1 only in a, 0 only in b, 0 errors, 6 other files ignored; "}
	if len(lines) != len(prefixes) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(prefixes), buf.String())
	}
	for i, p := range prefixes {
		if !strings.HasPrefix(lines[i], p) {
			t.Errorf("line %d: %q, want it to start with %q", i+1, lines[i], p)
		}
	}
	// loops.c: gcc's collatz_steps has an inner loop that clang's has not,
	// and gcc puts a line of matmul in its loop (see cmd/bloop's
	// TestDiffGCCvsClang).
	if want := "loops.hpcstruct: 2 procedures changed, 1 loop removed, 1 line out of loops"; lines[3] != want {
		t.Errorf("got  %s\nwant %s", lines[3], want)
	}
}

func TestSummaryCounts(t *testing.T) {
	cases := []struct {
		s    Summary
		want string
	}{
		{Summary{}, ""},
		{Summary{ProcsDiffer: 4, ProcsAdded: 3, LoopsRemoved: 1, InlinesMoved: 2},
			"3 procedures added, 1 procedure changed, 1 loop removed, 2 inlined calls moved"},
		{Summary{ProcsDiffer: 1, ProcsRemoved: 1, LoopsAdded: 1, LoopsMoved: 2, LoopsSplit: 1, LoopsFused: 2,
			InlinesAdded: 1, InlinesRemoved: 5, StmtsIntoLoop: 1, StmtsOutOfLoop: 3, Addresses: 1},
			"1 procedure removed, 1 loop added, 2 loops moved, 1 loop split, 2 loop fusions, 1 inlined call added, " +
				"5 inlined calls removed, 1 line into loops, 3 lines out of loops, 1 address changed"},
	}
	for _, c := range cases {
		if got := c.s.Counts(); got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.s, got, c.want)
		}
	}
}

// TestIsStructure: files are told by content, as Parse tells XML from
// JSON, but only structure files pass; a structure file cut short still
// does (Parse then says what is wrong).
func TestIsStructure(t *testing.T) {
	xmlHead := "<?xml version=\"1.0\"?>\n<!DOCTYPE HPCToolkitStructure [\n<!ELEMENT HPCToolkitStructure (LM)*>\n]>\n"
	cases := []struct {
		name, data string
		want       bool
	}{
		{"xml", xmlHead + "<HPCToolkitStructure i=\"0\" version=\"4.9\" n=\"\">\n</HPCToolkitStructure>\n", true},
		{"xml-bare-root", "\n  <HPCToolkitStructure i=\"0\" version=\"4.9\" n=\"\"></HPCToolkitStructure>", true},
		{"xml-comment-first", "<!-- x -->\n<HPCToolkitStructure i=\"0\" version=\"4.9\">", true},
		{"xml-cut-in-doctype", xmlHead[:60], true},
		{"xml-cut-in-root", xmlHead + "<HPCToolkitStr", true},
		{"xml-other-root", "<?xml version=\"1.0\"?>\n<project></project>\n", false},
		{"xml-latin1", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<HPCToolkitStructure i=\"0\">", true},
		{"html", "<!DOCTYPE html>\n<html></html>\n", false},
		{"xml-text-first", "<?xml version=\"1.0\"?>\nhello <HPCToolkitStructure>", false},
		{"json", `{"version": 1, "modules": null}`, true},
		{"json-modules-first", `{"modules": [], "version": 1}`, true},
		{"json-modules-after-big-value", `{"version": 1, "other": {"a": [1, 2, {"modules": 3}]}, "modules": []}`, true},
		{"json-modules-case", `{"Modules": []}`, true},
		{"json-cut", `{"version": 1, "modules": [{"path": "/bin/x", "na`, true},
		{"json-manifest", `{"version": 1, "path": "bin/x", "outcome": "written"}` + "\n" + `{"version": 1}`, false},
		{"json-nested-modules-only", `{"version": 1, "x": {"modules": []}}`, false},
		{"json-array", `[{"modules": []}]`, false},
		{"json-cut-before-modules", `{"version": 1, "pa`, false},
		{"empty", "", false},
		{"blank", " \n\t", false},
		{"elf", "\x7fELF\x02\x01\x01\x00", false},
		{"text", "modules HPCToolkitStructure\n", false},
	}
	dir := t.TempDir()
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := IsStructure(p)
		if err != nil || got != c.want {
			t.Errorf("%s: IsStructure = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	// Every corpus structure file passes.
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*"))
	for _, f := range files {
		if !strings.HasSuffix(f, ".json") && !strings.HasSuffix(f, ".hpcstruct") {
			continue
		}
		if ok, err := IsStructure(f); !ok || err != nil {
			t.Errorf("%s: IsStructure = %v, %v", f, ok, err)
		}
	}
	if _, err := IsStructure(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: error %v should name it", err)
	}
	// A read error is an error, not a file that is not a structure file.
	if _, err := IsStructure(dir); err == nil || !strings.Contains(err.Error(), dir+": read: ") {
		t.Errorf("directory: error %v should say the read failed", err)
	}
	// What decides lies in the first MiB: a root element after 2 MiB of
	// comment is not looked for.
	far := filepath.Join(dir, "far")
	os.WriteFile(far, []byte("<!--"+strings.Repeat("x", 2<<20)+"-->\n<HPCToolkitStructure>"), 0o644)
	if ok, err := IsStructure(far); ok || err != nil {
		t.Errorf("root after 2 MiB: IsStructure = %v, %v; want false", ok, err)
	}
}

// TestDiffDirsLinks: a symbolic link to a structure file is a structure
// file; a link to a directory is not followed (a link to the tree's own
// root would never end) and is counted as ignored.
func TestDiffDirsLinks(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	writeTree(t, a, map[string]src{"loops.hpcstruct": corpus("loops-gcc12-O2.hpcstruct")})
	writeTree(t, b, map[string]src{"real/loops.hpcstruct": corpus("loops-gcc12-O2.hpcstruct")})
	if err := os.Symlink("real/loops.hpcstruct", filepath.Join(b, "loops.hpcstruct")); err != nil {
		t.Skip(err)
	}
	if err := os.Symlink("..", filepath.Join(b, "real", "up")); err != nil {
		t.Fatal(err)
	}
	r, err := DiffDirs(a, b, DiffOptions{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := DirTotals{Pairs: 1, OnlyInB: 1, Ignored: 1}
	if got := r.Totals; got != want {
		t.Errorf("totals %+v, want %+v", got, want)
	}
	if len(r.Ignored) != 1 || r.Ignored[0] != filepath.Join(b, "real", "up") {
		t.Errorf("ignored %v", r.Ignored)
	}
}

func TestDiffDirsOperands(t *testing.T) {
	tmp := t.TempDir()
	f := filepath.Join(tmp, "f")
	os.WriteFile(f, nil, 0o644)
	if _, err := BothDirs(tmp, f); err == nil || !strings.Contains(err.Error(), tmp+" is a directory and "+f+" is not") {
		t.Errorf("BothDirs(dir, file): %v", err)
	}
	if _, err := BothDirs(f, tmp); err == nil {
		t.Errorf("BothDirs(file, dir): no error")
	}
	if d, err := BothDirs(tmp, tmp); !d || err != nil {
		t.Errorf("BothDirs(dir, dir) = %v, %v", d, err)
	}
	if d, err := BothDirs(f, filepath.Join(tmp, "missing")); d || err != nil {
		t.Errorf("BothDirs(file, missing) = %v, %v; want files, for ParseFile to report", d, err)
	}
	if _, err := DiffDirs(filepath.Join(tmp, "missing"), tmp, DiffOptions{}, 1); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("DiffDirs of a missing directory: %v", err)
	}
}

func TestBothDirsMissing(t *testing.T) {
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "missing")
	if _, err := BothDirs(tmp, missing); err == nil || !os.IsNotExist(err) || !strings.Contains(err.Error(), missing) {
		t.Errorf("BothDirs(dir, missing): %v, want the missing path's error", err)
	}
}
