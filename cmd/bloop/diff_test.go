package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bloop/diff"
	"bloop/structure"
)

// The diff tests compare the reviewed corpus goldens (testdata/golden, see
// testdata/README.md "Review of goldens"); the changes asserted here were
// checked by hand against the sources and the disassembly.
const goldenDir = "../../testdata/golden"

func goldenFile(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(goldenDir, name+".hpcstruct")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("golden %s missing", p)
	}
	return p
}

// diffCaptured runs runDiff with os.Stdout and os.Stderr sent to files and
// returns the exit code and both outputs.
func diffCaptured(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return captured(t, runDiff, args...)
}

// goldenReport is diff.Diff of two corpus goldens.
func goldenReport(t *testing.T, a, b string) *diff.Report {
	t.Helper()
	da, err := structure.ParseFile(goldenFile(t, a))
	if err != nil {
		t.Fatal(err)
	}
	db, err := structure.ParseFile(goldenFile(t, b))
	if err != nil {
		t.Fatal(err)
	}
	return diff.Diff(da, db, diff.DiffOptions{})
}

// hasChange reports whether procedure proc of r has a change of kind at path.
func hasChange(r *diff.Report, proc, kind, path string) bool {
	for _, p := range r.Procedures {
		if p.Name != proc {
			continue
		}
		for _, c := range p.Changes {
			if c.Kind == kind && c.Path == path {
				return true
			}
		}
	}
	return false
}

func wantLines(t *testing.T, report string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(report, l) {
			t.Errorf("report lacks %q; report:\n%s", l, report)
		}
	}
}

func TestDiffIdenticalGoldens(t *testing.T) {
	a := goldenFile(t, "tmpl-gcc12-O2")
	// A byte copy under another name, so the two arguments are different files.
	data, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(t.TempDir(), "copy.hpcstruct")
	if err := os.WriteFile(b, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := diffCaptured(t, a, b)
	if code != 0 {
		t.Fatalf("exit %d, want 0; stderr: %s", code, errOut)
	}
	if strings.Contains(out, "\nprocedure ") {
		t.Errorf("identical files report a procedure:\n%s", out)
	}
	wantLines(t, out, "\n0 procedures differ: 0 added, 0 removed; loops +0 -0 moved 0 split 0 fused 0; inlined calls +0 -0 moved 0;")
	if r := goldenReport(t, "tmpl-gcc12-O2", "tmpl-gcc12-O2"); !r.Equal() || r.Summary != (diff.Summary{}) {
		t.Errorf("diff.Diff of a file with itself: equal=%v summary %+v", r.Equal(), r.Summary)
	}
}

// TestDiffGCCvsClang: loops.c from gcc 12 and clang 14 at -O2. gcc turns
// the odd branch of collatz_steps (lines 43-45) into an inner loop headed
// at line 44 (the `test $1; jne` at 0x1607-0x160b), clang keeps one loop;
// gcc's line table puts a line-17 row (matmul's entry line) inside the
// j-loop of matmul, clang's does not.
func TestDiffGCCvsClang(t *testing.T) {
	a, b := goldenFile(t, "loops-gcc12-O2"), goldenFile(t, "loops-clang14-O2")
	code, out, errOut := diffCaptured(t, a, b)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr: %s", code, errOut)
	}
	wantLines(t, out,
		"procedure collatz_steps (loops.c): changed\n  loop removed           L(loops.c:43)/L(loops.c:44): its lines now in L(loops.c:43)\n",
		"procedure matmul (loops.c): changed\n  line out of loop       loops.c:17\n",
		"loops +0 -1 moved 0",
	)
	// The loops both compilers agree on are not reported.
	for _, p := range []string{"init", "first_big", "digit_sum", "main"} {
		if strings.Contains(out, "procedure "+p+" ") {
			t.Errorf("procedure %s reported, but its loops agree:\n%s", p, out)
		}
	}

	r := goldenReport(t, "loops-gcc12-O2", "loops-clang14-O2")
	if !hasChange(r, "collatz_steps", diff.LoopRemoved, "L(loops.c:43)/L(loops.c:44)") {
		t.Errorf("collatz_steps: inner loop at line 44 not reported removed: %+v", r.Procedures)
	}
	if r.Summary.LoopsRemoved != 1 || r.Summary.LoopsAdded != 0 || r.Summary.ProcsAdded+r.Summary.ProcsRemoved != 0 {
		t.Errorf("summary %+v", r.Summary)
	}
	// The other way round the loop is added.
	back := goldenReport(t, "loops-clang14-O2", "loops-gcc12-O2")
	if !hasChange(back, "collatz_steps", diff.LoopAdded, "L(loops.c:43)/L(loops.c:44)") {
		t.Errorf("clang -> gcc: collatz_steps inner loop not reported added: %+v", back.Procedures)
	}

	// inline.c: gcc 12 and clang 14 inline different things. clang inlines
	// inline_poly into main at line 63 (with its loop at 53 and poly_eval
	// at 54); gcc keeps inline_poly a call.
	ri := goldenReport(t, "inline-gcc12-O2", "inline-clang14-O2")
	if !hasChange(ri, "main", diff.InlineAdded, "A(inline.c:63:)/A(inline.c:53:inline_poly)") {
		t.Errorf("inline gcc -> clang: inline_poly inlined into main at line 63 not reported: %+v", ri.Procedures)
	}
}

// TestDiffO2vsO3: inline.c from gcc 12 at -O2 and -O3. At -O3 gcc inlines
// inline_poly into main at line 63 (bringing its loop at 53 and two
// poly_eval copies) and fully unrolls poly_eval's loop (inline_helpers.h:12,
// 5 trips), peeling one poly_eval copy out of inline_poly's loop. licm.c:
// the -O2 build heads transform's loop at line 14 (in a guard alien, as 14
// is above the procedure's line 16), the -O3 build at 16: within the loop
// header tolerance (structure.LoopLineTol), one loop, and the two builds'
// loops and inlined code are the same.
func TestDiffO2vsO3(t *testing.T) {
	a, b := goldenFile(t, "inline-gcc12-O2"), goldenFile(t, "inline-gcc12-O3")
	code, out, errOut := diffCaptured(t, a, b)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr: %s", code, errOut)
	}
	wantLines(t, out,
		"procedure main (inline.c): changed\n  inlined call added     A(inline.c:63:)/A(inline.c:53:inline_poly) (with 1 nested loops, 2 nested inlined calls)\n",
		"procedure inline_poly (inline.c): changed\n",
		"  loop removed           L(inline.c:53)/A(inline.c:54:)/A(inline_helpers.h:12:poly_eval)/L(inline_helpers.h:12): its lines now in A(inline.c:54:)/A(inline_helpers.h:13:poly_eval), L(inline.c:53)/A(inline.c:54:)/A(inline_helpers.h:13:poly_eval)\n",
		"  inlined call added     A(inline.c:54:)/A(inline_helpers.h:13:poly_eval)\n",
	)
	r := goldenReport(t, "inline-gcc12-O2", "inline-gcc12-O3")
	if !hasChange(r, "main", diff.InlineAdded, "A(inline.c:63:)/A(inline.c:53:inline_poly)") {
		t.Errorf("inline_poly inlined into main not reported: %+v", r.Procedures)
	}
	if !hasChange(r, "inline_poly", diff.LoopRemoved, "L(inline.c:53)/A(inline.c:54:)/A(inline_helpers.h:12:poly_eval)/L(inline_helpers.h:12)") {
		t.Errorf("unrolled poly_eval loop not reported removed: %+v", r.Procedures)
	}
	// Loops added/removed count the loops nested in added inlined calls.
	if r.Summary.LoopsAdded != 1 || r.Summary.LoopsRemoved != 1 || r.Summary.InlinesAdded < 3 {
		t.Errorf("summary %+v", r.Summary)
	}

	code, out, errOut = diffCaptured(t, goldenFile(t, "licm-gcc12-O2"), goldenFile(t, "licm-gcc12-O3"))
	if code != 0 {
		t.Fatalf("licm: exit %d, want 0; stderr: %s", code, errOut)
	}
	wantLines(t, out, "0 procedures differ")
}

func TestDiffJSON(t *testing.T) {
	a, b := goldenFile(t, "loops-gcc12-O2"), goldenFile(t, "loops-clang14-O2")
	code, out, errOut := diffCaptured(t, "--json", a, b)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr: %s", code, errOut)
	}
	var r struct {
		A, B    string
		Summary map[string]int
		// Procedures as plain JSON, to check the field names tools see.
		Procedures []struct {
			Name, File, Status string
			Changes            []struct{ Kind, Path string }
		}
	}
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, out)
	}
	if dec.More() {
		t.Errorf("trailing data after the JSON report")
	}
	for _, k := range []string{"procedures_differ", "procedures_added", "procedures_removed", "loops_added", "loops_removed",
		"loops_moved", "loops_split", "loops_fused", "inlined_calls_added", "inlined_calls_removed", "inlined_calls_moved",
		"statements_into_loops", "statements_out_of_loops"} {
		if _, ok := r.Summary[k]; !ok {
			t.Errorf("summary lacks %q: %v", k, r.Summary)
		}
	}
	if r.Summary["procedures_differ"] != 2 || r.Summary["loops_removed"] != 1 || r.Summary["statements_out_of_loops"] != 1 {
		t.Errorf("summary %v", r.Summary)
	}
	found := false
	for _, p := range r.Procedures {
		for _, c := range p.Changes {
			if p.Name == "collatz_steps" && p.File == "loops.c" && p.Status == "changed" && c.Kind == "loop-removed" && c.Path == "L(loops.c:43)/L(loops.c:44)" {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("JSON report lacks collatz_steps' removed loop:\n%s", out)
	}
	if !strings.HasSuffix(r.A, "loops-gcc12-O2.hpcstruct") || !strings.HasSuffix(r.B, "loops-clang14-O2.hpcstruct") {
		t.Errorf("a, b = %q, %q", r.A, r.B)
	}

	// Identical files: exit 0, all counts zero, no procedures.
	code, out, _ = diffCaptured(t, "--json", a, a)
	if code != 0 {
		t.Fatalf("identical: exit %d", code)
	}
	var eq diff.Report
	if err := json.Unmarshal([]byte(out), &eq); err != nil {
		t.Fatal(err)
	}
	if eq.Summary != (diff.Summary{}) || len(eq.Procedures) != 0 {
		t.Errorf("identical files: %+v", eq)
	}
}

// TestDiffBadInput: a truncated structure file (XML or JSON), a file that
// is not a structure file (a binary, JSON of something else) and a missing
// file give exit 2, nothing on stdout, and a one-line message naming the file.
func TestDiffBadInput(t *testing.T) {
	good := goldenFile(t, "switch-gcc12-O2")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	trunc := filepath.Join(dir, "truncated.hpcstruct")
	// Cut inside the scope tree, mid-element.
	cut := bytes.Index(data, []byte("<L "))
	if cut < 0 {
		t.Fatal("no loop in the golden")
	}
	if err := os.WriteFile(trunc, data[:cut+10], 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.hpcstruct")
	os.WriteFile(empty, nil, 0o644)
	js, err := os.ReadFile(filepath.Join(goldenDir, "switch-gcc12-O2.json"))
	if err != nil {
		t.Fatal(err)
	}
	truncJSON := filepath.Join(dir, "truncated.json")
	// Cut inside the scope tree, mid-string.
	cut = bytes.Index(js, []byte(`"kind": "L"`))
	if cut < 0 {
		t.Fatal("no loop in the JSON golden")
	}
	if err := os.WriteFile(truncJSON, js[:cut+5], 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(`{"name": "not a structure file"}`+"\n"), 0o644)
	cases := []struct{ file, msg string }{
		{trunc, "truncated XML"},
		{truncJSON, "truncated JSON"},
		{empty, "empty file"},
		{other, `not a bloop JSON structure file: no "version"`},
		{"../../testdata/bin/switch-gcc12-O2", "not a structure file"},
		{filepath.Join(dir, "missing.hpcstruct"), "no such file"},
	}
	for _, c := range cases {
		if _, err := os.Stat(c.file); err != nil && !strings.Contains(c.file, "missing") {
			continue
		}
		for _, args := range [][]string{{good, c.file}, {c.file, good}, {"--json", good, c.file}} {
			code, out, errOut := diffCaptured(t, args...)
			if code != 2 {
				t.Errorf("%v: exit %d, want 2", args, code)
			}
			if out != "" {
				t.Errorf("%v: wrote a report on error:\n%s", args, out)
			}
			if !strings.Contains(errOut, "bloop diff: ") || !strings.Contains(errOut, c.file) || !strings.Contains(errOut, c.msg) {
				t.Errorf("%v: error message %q should name %s and say %q", args, errOut, c.file, c.msg)
			}
			if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Errorf("%v: error message is not one line: %q", args, errOut)
			}
		}
	}
}

// TestDiffMalformed: a structure file that breaks the format's value rules
// (a line that is not a number, a missing id, a range set that does not
// parse, a 9.6 MB attribute; XML or JSON) gives exit 2 and one short line
// "bloop diff: FILE:LINE: ...", LINE being the bad element's.
func TestDiffMalformed(t *testing.T) {
	good := goldenFile(t, "switch-gcc12-O2")
	xml, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(goldenDir, "switch-gcc12-O2.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// mutate replaces the first old in data after the first after, and
	// returns the file and the line of the replacement.
	mutate := func(name string, data []byte, after, old, new string) (string, int) {
		t.Helper()
		from := bytes.Index(data, []byte(after))
		at := bytes.Index(data[from:], []byte(old))
		if from < 0 || at < 0 {
			t.Fatalf("%s: %q after %q not found", name, old, after)
		}
		at += from
		out := append(append(append([]byte(nil), data[:at]...), new...), data[at+len(old):]...)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return path, 1 + bytes.Count(data[:at], []byte("\n"))
	}
	huge := strings.Repeat("x", 9_600_000)
	cases := []struct {
		name, after, old, new, msg string
		data                       []byte
	}{
		{"line.hpcstruct", "<S ", ` l="`, ` l="abc`, `<S> attribute l: "abc`, xml},
		{"negative.hpcstruct", "<L ", ` l="`, ` l="-`, `<L> attribute l: "-`, xml},
		{"no-id.hpcstruct", "<P ", `<P i="`, `<P x="`, `<P> lacks attribute i`, xml},
		{"range.hpcstruct", "<S ", ` v="{[`, ` v="{(`, `<S> attribute v: bad range set`, xml},
		{"huge.hpcstruct", "<S ", ` v="{`, ` v="{` + huge, `<S> attribute v longer than 1048576 bytes`, xml},
		{"line.json", `"kind": "S"`, `"line": `, `"line": -`, `S scope "line": "-`, js},
		{"huge.json", `"kind": "P"`, `"name": "`, `"name": "` + huge, `JSON string longer than 1048576 bytes`, js},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad, line := mutate(c.name, c.data, c.after, c.old, c.new)
			code, out, errOut := diffCaptured(t, good, bad)
			if code != 2 || out != "" {
				t.Errorf("exit %d, stdout %q; want 2 and nothing", code, out)
			}
			prefix := fmt.Sprintf("bloop diff: %s:%d: ", bad, line)
			if !strings.HasPrefix(errOut, prefix) || !strings.Contains(errOut, c.msg) {
				t.Errorf("stderr %q, want %q...%q", errOut, prefix, c.msg)
			}
			if strings.Count(errOut, "\n") != 1 || len(errOut) > len(prefix)+200 {
				t.Errorf("stderr is not one short line: %d bytes", len(errOut))
			}
		})
	}
}

// TestDiffGccVsClangCallSites: gcc 12 writes DWARF 5 call sites as
// DW_FORM_implicit_const, which hpcstruct cannot read. In the default
// output they are real, so the gcc and clang builds of irred.c agree on
// main's two inlined atoi calls (lines 53 and 54) and diff reports only
// what the compilers did differently.
func TestDiffGccVsClangCallSites(t *testing.T) {
	r := goldenReport(t, "irred-gcc12-O2", "irred-clang14-O2")
	for _, p := range r.Procedures {
		for _, c := range p.Changes {
			if strings.HasPrefix(c.Kind, "inline-") {
				t.Errorf("%s: %s %s %s -> %s", p.Name, c.Kind, c.Path, c.Old, c.New)
			}
		}
	}
	if r.Summary.LoopsSplit != 2 {
		t.Errorf("summary %+v, want main's and normal's loops split", r.Summary)
	}
}

// structBoth writes the structure of corpus binary bin with bloop struct,
// as XML and as JSON, into dir; it returns the two files.
func structBoth(t *testing.T, dir, bin string) (xml, js string) {
	t.Helper()
	in := filepath.Join("../../testdata/bin", bin)
	if _, err := os.Stat(in); err != nil {
		t.Fatalf("corpus binary %s missing", in)
	}
	xml, js = filepath.Join(dir, bin+".hpcstruct"), filepath.Join(dir, bin+".json")
	if code := runStruct([]string{"-o", xml, in}); code != 0 {
		t.Fatalf("struct %s: exit %d", bin, code)
	}
	if code := runStruct([]string{"--format", "json", "-o", js, in}); code != 0 {
		t.Fatalf("struct --format json %s: exit %d", bin, code)
	}
	return xml, js
}

// withoutNames replaces the file names a and b in a report by "A" and "B",
// so that reports on the XML and the JSON of the same binaries compare.
func withoutNames(report, a, b string) string {
	return strings.ReplaceAll(strings.ReplaceAll(report, a, "A"), b, "B")
}

// TestDiffJSONInput: bloop diff reads the JSON that bloop struct writes.
// The XML and the JSON of one binary are equal, in either order, also
// with --addresses; and two binaries give the same report whichever form
// each side is in.
func TestDiffJSONInput(t *testing.T) {
	bins := []string{"loops-gcc12-O2", "loops-clang14-O2", "stl-gcc12-O3", "stl-clang14-O3", "irred-gcc12-O2", "irred-clang14-O2"}
	dir := t.TempDir()
	files := map[string][2]string{} // binary -> XML, JSON
	for _, b := range bins {
		x, j := structBoth(t, dir, b)
		files[b] = [2]string{x, j}
	}
	for _, b := range bins {
		x, j := files[b][0], files[b][1]
		for _, args := range [][]string{{x, j}, {j, x}, {"--addresses", x, j}, {"--addresses", j, x}} {
			code, out, errOut := diffCaptured(t, args...)
			if code != 0 || !strings.Contains(out, "\n0 procedures differ:") {
				t.Errorf("%v: exit %d, want 0 and no difference; stderr %q\n%s", args, code, errOut, out)
			}
		}
	}
	cross := [][2]string{
		{"loops-gcc12-O2", "loops-clang14-O2"},
		{"stl-gcc12-O3", "stl-clang14-O3"},
		{"irred-gcc12-O2", "irred-clang14-O2"},
	}
	for _, c := range cross {
		for _, flags := range [][]string{nil, {"--addresses"}, {"--json"}} {
			// All four combinations of forms; the first, XML vs XML, is the reference.
			var want string
			for k, form := range [][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
				a, b := files[c[0]][form[0]], files[c[1]][form[1]]
				code, out, errOut := diffCaptured(t, append(slices.Clone(flags), a, b)...)
				if code != 1 {
					t.Errorf("%v %s %s: exit %d, want 1; stderr %q", flags, a, b, code, errOut)
				}
				got := withoutNames(out, a, b)
				if k == 0 {
					want = got
					if !strings.Contains(got, "procedure") {
						t.Errorf("%v %s %s: no procedure in the report:\n%s", flags, a, b, got)
					}
				} else if got != want {
					t.Errorf("%v %s %s: report differs from XML vs XML:\n%s\nwant:\n%s", flags, a, b, got, want)
				}
			}
		}
	}
}

// TestDiffUsage: -h explains the input forms and the path notation, and
// its example is a change diff really reports on the corpus goldens.
func TestDiffUsage(t *testing.T) {
	code, out, errOut := diffCaptured(t, "-h")
	if code != 0 || errOut != "" {
		t.Errorf("-h: exit %d, stderr %q", code, errOut)
	}
	wantLines(t, out, "usage: bloop diff", "-addresses", "JSON",
		"L(file:line)", "A(file:line:)/A(file:line:f)", "S(file:line)", "(procedure)")
	const example = "loop removed  L(inline.c:53)/A(inline.c:54:)/A(inline_helpers.h:12:poly_eval)/L(inline_helpers.h:12)"
	wantLines(t, out, example, "procedure inline_poly")
	r := goldenReport(t, "inline-gcc12-O2", "inline-gcc12-O3")
	path := strings.TrimPrefix(example, "loop removed  ")
	if !hasChange(r, "inline_poly", diff.LoopRemoved, path) {
		t.Errorf("the usage example %s is not in the report: %+v", path, r.Procedures)
	}
}
