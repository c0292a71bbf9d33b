package structure

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"bloop/internal/structtest"
)

// smallJSON is structtest.SmallDoc as bloop's JSON writer would write it.
const smallJSON = `{
 "version": 1,
 "modules": [
  {
   "path": "/bin/x",
   "name": "x",
   "files": [
    {
     "name": "/src/x.c",
     "procs": [
      {"kind": "P", "name": "main", "line": 5, "lines": [5, 7], "entry": "0x100", "children": [
        {"kind": "S", "line": 5, "ranges": [["0x100", "0x108"]]},
        {"kind": "L", "file": "/src/x.c", "line": 6, "entry": "0x108", "children": [
          {"kind": "S", "line": 7, "ranges": [["0x108", "0x110"]]},
          {"kind": "A", "file": "/src/x.c", "line": 8, "inline": "call", "children": [
            {"kind": "A", "name": "g", "file": "/src/y.h", "line": 2, "inline": "callee", "children": [
              {"kind": "S", "line": 2, "ranges": [["0x110", "0x118"]]}
            ]}
          ]}
        ]}
      ]}
     ]
    }
   ]
  }
 ]
}
`

// sameTree reports the first difference between two element trees,
// attributes in order, ignoring Node.Line (JSON has none); "" if none.
func sameTree(a, b *Node, path string) string {
	path = joinPath(path, a.Tag)
	if a.Tag != b.Tag {
		return fmt.Sprintf("%s: tag %s vs %s", path, a.Tag, b.Tag)
	}
	if fmt.Sprint(a.Attrs) != fmt.Sprint(b.Attrs) {
		return fmt.Sprintf("%s: attributes %v vs %v", path, a.Attrs, b.Attrs)
	}
	if len(a.Children) != len(b.Children) {
		return fmt.Sprintf("%s: %d vs %d children", path, len(a.Children), len(b.Children))
	}
	for i := range a.Children {
		if d := sameTree(a.Children[i], b.Children[i], path); d != "" {
			return d
		}
	}
	return ""
}

func TestParseJSONSmall(t *testing.T) {
	x := mustParse(t, structtest.SmallDoc, "small.hpcstruct")
	j := mustParse(t, smallJSON, "small.json")
	if j.Name != "small.json" {
		t.Errorf("Name = %q", j.Name)
	}
	// structtest.SmallDoc's ids and root attributes are bloop's, so the trees are identical.
	if d := sameTree(x.Root, j.Root, ""); d != "" {
		t.Errorf("JSON and XML trees differ: %s", d)
	}
	// Blanks before the '{' are allowed, as before the '<'.
	if _, err := Parse(strings.NewReader("\n \t\r\n"+smallJSON), "blank.json"); err != nil {
		t.Errorf("leading blanks: %v", err)
	}
}

// TestParseJSONCallSite: a C scope and has_calls become the XML's C
// element (l v t d, in that order) and has-calls="1".
func TestParseJSONCallSite(t *testing.T) {
	const xml = `<HPCToolkitStructure i="0" version="4.9" n=""><LM i="2" n="k.cubin" has-calls="1" v="{}"><F i="3" n="k.cu">` +
		`<P i="4" n="k" l="3" v="{[0x100-0x101)}"><S i="5" l="3" v="{[0x100-0x110)}"/>` +
		`<C i="6" l="4" v="{[0x110-0x120)}" t="0x200" d="NVIDIA sm_70"/><C i="7" l="5" v="{[0x120-0x130)}" d="NVIDIA sm_70"/></P></F></LM></HPCToolkitStructure>`
	const js = `{"version": 1, "modules": [{"path": "k.cubin", "name": "k.cubin", "has_calls": true, "files": [{"name": "k.cu", "procs": [` +
		`{"kind": "P", "name": "k", "line": 3, "entry": "0x100", "children": [` +
		`{"kind": "S", "line": 3, "ranges": [["0x100", "0x110"]]},` +
		`{"kind": "C", "line": 4, "ranges": [["0x110", "0x120"]], "target": "0x200", "device": "NVIDIA sm_70"},` +
		`{"kind": "C", "line": 5, "ranges": [["0x120", "0x130"]], "device": "NVIDIA sm_70"}]}]}]}]}`
	x, err := Parse(strings.NewReader(xml), "k.hpcstruct")
	if err != nil {
		t.Fatal(err)
	}
	j, err := Parse(strings.NewReader(js), "k.json")
	if err != nil {
		t.Fatal(err)
	}
	if d := sameTree(x.Root, j.Root, ""); d != "" {
		t.Errorf("JSON and XML trees differ: %s", d)
	}
}

// TestParseJSONModules: several modules become several LM, as in the XML
// (each numbered from 2, as the XML writer does), and Diff sees the
// procedures of all of them (diff.TestDiffJSONModules); no modules is an empty document.
func TestParseJSONModules(t *testing.T) {
	mod := func(path, proc, entry string) string {
		return `{"path": "` + path + `", "name": "m", "files": [{"name": "a.c", "procs": [` +
			`{"kind": "P", "name": "` + proc + `", "line": 1, "entry": "` + entry + `", "children": [` +
			`{"kind": "S", "line": 1, "ranges": [["` + entry + `", "0x2000"]]}]}]}]}`
	}
	two := mustParse(t, `{"version": 1, "modules": [`+mod("/lib/a.so", "f", "0x1000")+`, `+mod("/lib/b.so", "g", "0x1800")+`]}`, "two.json")
	const xml = `<HPCToolkitStructure i="0" version="4.9" n="">` +
		`<LM i="2" n="/lib/a.so" has-calls="0" v="{}"><F i="3" n="a.c"><P i="4" n="f" l="1" v="{[0x1000-0x1001)}"><S i="5" l="1" v="{[0x1000-0x2000)}"/></P></F></LM>` +
		`<LM i="2" n="/lib/b.so" has-calls="0" v="{}"><F i="3" n="a.c"><P i="4" n="g" l="1" v="{[0x1800-0x1801)}"><S i="5" l="1" v="{[0x1800-0x2000)}"/></P></F></LM>` +
		`</HPCToolkitStructure>`
	if d := sameTree(mustParse(t, xml, "two.hpcstruct").Root, two.Root, ""); d != "" {
		t.Errorf("two modules: %s", d)
	}
	for _, src := range []string{`{"version": 1, "modules": null}`, `{"version": 1, "modules": []}`, `{"version": 1}`} {
		d := mustParse(t, src, "none.json")
		if len(d.Root.Children) != 0 {
			t.Errorf("%s: %d children", src, len(d.Root.Children))
		}
	}
}

func TestParseJSONErrors(t *testing.T) {
	// doc wraps one procedure's children (JSON text) in a whole document.
	doc := func(children string) string {
		return `{"version": 1, "modules": [{"path": "x", "files": [{"name": "x.c", "procs": [` +
			`{"kind": "P", "name": "p", "line": 1, "entry": "0x10", "children": [` + children + `]}]}]}]}`
	}
	const at = "modules[0].files[0].procs[0]"
	tests := []struct{ name, src, msg string }{
		{"truncated", smallJSON[:len(smallJSON)/2], "truncated JSON: unexpected end of file"},
		{"truncated-string", `{"version": 1, "modules": [{"path": "x`, "truncated JSON"},
		{"syntax", `{"version": 1,, }`, "invalid JSON"},
		{"trailing", `{"version": 1} {}`, "invalid JSON"},
		{"no-version", `{"a": 1}`, `no "version"`},
		{"version", `{"version": 2, "modules": []}`, "JSON version 2, want 1"},
		{"version-type", `{"version": "1"}`, "version is a JSON string, want integer"},
		{"modules-type", `{"version": 1, "modules": {}}`, "modules is a JSON object, want array"},
		{"line-float", doc(`{"kind": "S", "line": 1.5}`), at + `.children[0]: S scope "line": "1.5": want a decimal integer from 0 to 4294967295`},
		{"null-scope", doc(`null`), at + ".children[0]: scope is null"},
		{"kind", doc(`{"kind": "X", "line": 1}`), at + `.children[0]: kind "X", want P, A, L, S or C`},
		{"C-no-device", doc(`{"kind": "C", "line": 1, "ranges": [["0x10", "0x20"]]}`), `C scope without "device"`},
		{"target-on-S", doc(`{"kind": "S", "line": 1, "ranges": [["0x10", "0x20"]], "target": "0x40"}`), `S scope with "target" or "device"`},
		{"C-target", doc(`{"kind": "C", "line": 1, "ranges": [["0x10", "0x20"]], "target": "40", "device": "NVIDIA sm_70"}`), `target: address "40"`},
		{"C-in-A-call", doc(`{"kind": "C", "line": 1, "ranges": [["0x10", "0x20"]], "device": "d", "children": [{"kind": "S", "line": 1}]}`), "kind S is not allowed inside C"},
		{"no-kind", doc(`{"line": 1}`), `kind "", want`},
		{"S-in-S", doc(`{"kind": "S", "line": 1, "children": [{"kind": "S", "line": 2}]}`), at + ".children[0].children[0]: kind S is not allowed inside S"},
		{"P-in-L", doc(`{"kind": "L", "line": 1, "children": [{"kind": "P", "line": 2}]}`), "kind P is not allowed inside L"},
		{"A-in-F", `{"version": 1, "modules": [{"files": [{"name": "x.c", "procs": [{"kind": "A", "line": 1}]}]}]}`, at + ": kind A is not allowed inside F"},
		{"no-line", doc(`{"kind": "L", "entry": "0x10"}`), `L scope without "line"`},
		{"ranges-on-L", doc(`{"kind": "L", "line": 1, "ranges": [["0x1", "0x2"]]}`), `L scope with "ranges"`},
		{"entry-on-S", doc(`{"kind": "S", "line": 1, "entry": "0x1"}`), `S scope with "entry"`},
		{"inline-on-L", doc(`{"kind": "L", "line": 1, "inline": "call"}`), `L scope with "inline"`},
		{"inline-value", doc(`{"kind": "A", "line": 1, "inline": "maybe"}`), `inline "maybe", want`},
		{"entry-hex", doc(`{"kind": "L", "line": 1, "entry": "0X10"}`), `entry: address "0X10"`},
		{"entry-max", doc(`{"kind": "L", "line": 1, "entry": "0xffffffffffffffff"}`), "no byte after it"},
		{"range-len", doc(`{"kind": "S", "line": 1, "ranges": [["0x1", "0x2", "0x3"]]}`), "3 addresses in a range"},
		{"range-short", doc(`{"kind": "S", "line": 1, "ranges": [["0x1"]]}`), "1 addresses in a range"},
		{"range-addr", doc(`{"kind": "S", "line": 1, "ranges": [["0x1-0x2) [0x3", "0x4"]]}`), "ranges: address"},
		{"range-reversed", doc(`{"kind": "S", "line": 1, "ranges": [["0x2", "0x1"]]}`), "empty or reversed"},
		{"range-overlap", doc(`{"kind": "S", "line": 1, "ranges": [["0x1", "0x4"], ["0x3", "0x5"]]}`), "overlaps"},
		{"deep", doc(strings.Repeat(`{"kind": "L", "line": 1, "children": [`, 1100) + strings.Repeat(`]}`, 1100)), "nested deeper than 1000"},
		{"array", `[{"version": 1}]`, "not a structure file"},
		{"text", "hello", "not a structure file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "case-" + tt.name + ".json"
			d, err := Parse(strings.NewReader(tt.src), name)
			if err == nil {
				t.Fatalf("no error; root %+v", d.Root)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != name {
				t.Errorf("error %v is not a *ParseError for %s", err, name)
			}
			if !strings.HasPrefix(err.Error(), name+":") || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error = %q, want %s: ...%q...", err, name, tt.msg)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestParseJSONErrorLine: syntax errors carry the line of the bad byte.
func TestParseJSONErrorLine(t *testing.T) {
	src := strings.Replace(smallJSON, `"line": 7,`, `"line": 7,,`, 1)
	_, err := Parse(strings.NewReader(src), "f.json")
	if err == nil || !strings.HasPrefix(err.Error(), "f.json:14: invalid JSON") {
		t.Errorf("err = %v, want f.json:14: invalid JSON ...", err)
	}
}

// goldenPairs lists the corpus goldens that exist as both .hpcstruct and
// .json (written by one `bloop struct` run each).
func goldenPairs(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{"golden", "golden-arm64", "golden-ppc64le"} {
		js, _ := filepath.Glob(filepath.Join("../testdata", dir, "*.json"))
		for _, j := range js {
			if _, err := os.Stat(strings.TrimSuffix(j, ".json") + ".hpcstruct"); err == nil {
				out = append(out, strings.TrimSuffix(j, ".json"))
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no corpus goldens under ../testdata")
	}
	return out
}

// TestGoldenJSONMatchesXML: every golden's JSON gives the very tree its
// XML gives (attributes, their order, ids), so Equal and Diff find the
// pair equal in both orders (sameTree: identical trees).
func TestGoldenJSONMatchesXML(t *testing.T) {
	pairs := goldenPairs(t)
	for _, base := range pairs {
		t.Run(strings.TrimPrefix(base, "../testdata/"), func(t *testing.T) {
			t.Parallel()
			x, err := ParseFile(base + ".hpcstruct")
			if err != nil {
				t.Fatal(err)
			}
			j, err := ParseFile(base + ".json")
			if err != nil {
				t.Fatal(err)
			}
			if d := sameTree(x.Root, j.Root, ""); d != "" {
				t.Errorf("JSON and XML trees differ: %s", d)
			}
		})
	}
	t.Logf("%d XML/JSON pairs", len(pairs))
}

// TestGoldenJSONTruncated cuts ten golden JSON files at a few points:
// every cut is an error naming the file, never a panic.
func TestGoldenJSONTruncated(t *testing.T) {
	pairs := goldenPairs(t)
	for _, base := range pairs[:min(10, len(pairs))] {
		data, err := os.ReadFile(base + ".json")
		if err != nil {
			t.Fatal(err)
		}
		end := bytes.LastIndexByte(data, '}')
		for _, n := range []int{1, 2, end / 3, end / 2, end - 1, end} {
			_, err := Parse(bytes.NewReader(data[:n]), base)
			if err == nil || !strings.HasPrefix(err.Error(), base+":") || !strings.Contains(err.Error(), "truncated JSON") {
				t.Errorf("%s cut at %d of %d: err = %v", base, n, len(data), err)
			}
		}
	}
}

// xmlText renders d as an XML structure file, for the fuzz target's
// cross-check of the JSON reader against the XML reader.
func xmlText(n *Node, b *strings.Builder) {
	b.WriteString(StartTag(n))
	for _, c := range n.Children {
		xmlText(c, b)
	}
	b.WriteString("</" + n.Tag + ">")
}

// xmlSafe reports whether every attribute of the tree survives an XML
// round trip unchanged: valid UTF-8, printable, no blanks an XML reader
// would normalize.
func xmlSafe(n *Node) bool {
	for _, a := range n.Attrs {
		if !utf8.ValidString(a.Val) {
			return false
		}
		for _, r := range a.Val {
			if !unicode.IsPrint(r) {
				return false
			}
		}
	}
	for _, c := range n.Children {
		if !xmlSafe(c) {
			return false
		}
	}
	return true
}

func FuzzParseJSON(f *testing.F) {
	f.Add([]byte(smallJSON))
	f.Add([]byte(smallJSON[:len(smallJSON)/2]))
	f.Add([]byte(`{"version": 1, "modules": null}`))
	f.Add([]byte(`{"version": 1, "modules": [{"files": [{"name": "a", "procs": [{"kind": "P", "line": 1, "entry": "0", "children": [{"kind": "S", "line": 0, "ranges": [["0", "0x1"]]}]}]}]}]}`))
	f.Add([]byte(`{"version": 1, "modules": [{}, {"files": [{}]}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"version": 1, "modules": [{"files": [{"procs": [null]}]}]}`))
	for _, g := range []string{"hot-gcc12-O2nodebug", "switch-clang14-O2nodebug", "irred-gcc12-O2nodebug"} {
		if data, err := os.ReadFile(filepath.Join("../testdata/golden", g+".json")); err == nil {
			f.Add(data)
		}
	}
	for _, c := range validationCases() {
		if strings.HasPrefix(c.name, "json") && len(c.src) < 64<<10 {
			f.Add([]byte(c.src))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, ok := fuzzParse(t, data)
		if !ok {
			return
		}
		if !xmlSafe(d.Root) {
			return
		}
		// What the JSON reader accepts, the XML reader accepts as XML,
		// giving the same tree.
		var b strings.Builder
		xmlText(d.Root, &b)
		x, err := Parse(strings.NewReader(b.String()), "fuzz.xml")
		if err != nil {
			t.Fatalf("JSON accepted but its XML is not: %v\n%s", err, b.String())
		}
		if diff := sameTree(x.Root, d.Root, ""); diff != "" {
			t.Fatalf("XML of the JSON reads back differently: %s", diff)
		}
	})
}

// TestParseJSONDepth: the JSON reader's nesting limit is the XML reader's,
// counted the same way (root, LM, F, then scopes).
func TestParseJSONDepth(t *testing.T) {
	for _, loops := range []int{maxDepth - 4, maxDepth - 3} {
		js := `{"version": 1, "modules": [{"files": [{"name": "x.c", "procs": [{"kind": "P", "line": 1, "children": [` +
			strings.Repeat(`{"kind": "L", "line": 1, "children": [`, loops) + strings.Repeat(`]}`, loops) + `]}]}]}]}`
		xml := `<HPCToolkitStructure i="0" version="4.9"><LM n="x" has-calls="0"><F n="x.c"><P n="p" l="1">` + strings.Repeat(`<L l="1">`, loops) +
			strings.Repeat(`</L>`, loops) + `</P></F></LM></HPCToolkitStructure>`
		_, errJ := Parse(strings.NewReader(js), "deep.json")
		_, errX := Parse(strings.NewReader(structtest.WithIDs(xml)), "deep.hpcstruct")
		if (errJ == nil) != (errX == nil) {
			t.Errorf("%d nested loops: JSON error %v, XML error %v", loops, errJ, errX)
		}
		if want := loops > maxDepth-4; (errJ != nil) != want {
			t.Errorf("%d nested loops: JSON error %v, want error: %v", loops, errJ, want)
		}
	}
}
