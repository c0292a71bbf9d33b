package view

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/rectest"
	"bloop/profile"
	"bloop/sample"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Names that are markup when taken for HTML: C++ templates and operators,
// quotes, and an end tag of the page's own script element.
const (
	nameTemplate = `std::vector<int, std::allocator<int> >::push_back(int const&)`
	nameOperator = `operator<<(std::ostream&, "x" const&)`
	nameScript   = `</script><b id="x">not bold</b>&amp;`
)

// synthetic builds a profile by hand, as profile.Build would from a
// recording: main calls work (a loop with an inlined helper) and the
// oddly named procedures, on two threads. Files under testdata/src exist,
// others not.
func synthetic() *profile.Profile {
	p := &profile.Profile{Root: &profile.Node{Label: "<program>"}, Threads: map[uint32]*profile.Node{},
		Comms: map[uint32]string{1: "prog"}, Reasons: map[string]uint64{}}
	p.Meta = sample.Meta{Command: []string{"./prog", "a<b"}, Event: "cpu-clock", Freq: 1000, StackSize: 32768}
	mainP := &profile.Elem{Kind: profile.ElemProc, Name: "main", Module: "prog", File: "/src/m.c", Line: 1}
	workP := &profile.Elem{Kind: profile.ElemProc, Name: "work", Module: "prog", File: "/src/w.c", Line: 3}
	tmpl := &profile.Elem{Kind: profile.ElemProc, Name: nameTemplate, Module: "libstdc++.so.6", File: "/usr/include/c++/0/bits/stl_vector.h", Line: 1280}
	op := &profile.Elem{Kind: profile.ElemProc, Name: nameOperator, Module: "prog", File: "/src/m.c", Line: 9}
	scr := &profile.Elem{Kind: profile.ElemProc, Name: nameScript, Module: "prog"}
	loop := &profile.Elem{Kind: profile.ElemLoop, File: "/src/w.c", Line: 5, Addr: 0x1100}
	inl := &profile.Elem{Kind: profile.ElemInline, Name: "helper", File: "/src/h.h", Line: 2, CallFile: "/src/w.c", CallLine: 7}
	st := func(file string, line int) *profile.Elem {
		return &profile.Elem{Kind: profile.ElemStmt, File: file, Line: line}
	}
	m4, m5, m6 := st("/src/m.c", 4), st("/src/m.c", 5), st("/src/m.c", 6)
	add := func(n uint64, tid uint32, path ...*profile.Elem) {
		tr := p.Threads[tid]
		if tr == nil {
			tr = &profile.Node{Label: "thread"}
			p.Threads[tid] = tr
		}
		for _, root := range []*profile.Node{p.Root, tr} {
			cur := root
			cur.Incl += n
			for _, e := range path {
				cur = childOf(cur, e)
				cur.Incl += n
			}
			cur.Excl += n
		}
		p.Samples += n
		p.Total += n
		p.Outcomes[0] += n
	}
	add(60, 1, mainP, m4, workP, loop, inl, st("/src/h.h", 3))
	add(20, 1, mainP, m4, workP, loop, st("/src/w.c", 6))
	add(5, 1, mainP, m4, workP, st("/src/w.c", 9))
	add(8, 2, mainP, m5, tmpl, st("/usr/include/c++/0/bits/stl_vector.h", 1287))
	add(4, 2, mainP, m6, op, st("/src/m.c", 10))
	add(3, 1, mainP, m6, op, st("/src/m.c", 10), scr)
	p.Lost = 2
	return p
}

// childOf returns n's child for scope e, made when missing (one child
// per scope, as profile's trees have).
func childOf(n *profile.Node, e *profile.Elem) *profile.Node {
	for _, c := range n.Children {
		if c.Elem == e {
			return c
		}
	}
	c := &profile.Node{Elem: e, Label: e.Label(), Parent: n}
	n.Children = append(n.Children, c)
	return c
}

// checkGolden compares got with testdata/name; -update rewrites it.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./view -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./view -update rewrites it)\n--- got\n%s", path, got)
	}
}

func indented(t *testing.T, d *ReportData) []byte {
	t.Helper()
	b, err := jsonIndent(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonIndent is the golden files' form of page data.
func jsonIndent(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", " ")
	return append(b, '\n'), err
}

// The synthetic profile's sources, and the corpus programs' (their
// DWARF names them /src/...).
var (
	testSources = Options{Replace: []Replacement{{Old: "/src", New: "testdata/src"}}}
	// (System headers are left out: whether they exist varies.)
	repoSources = Options{Replace: []Replacement{{Old: "/src", New: "../testdata/src"}, {Old: "/usr/include", New: "/nonexistent"}}}
)

// TestReportDataGolden: the page data of the hand-made profile, sources
// found (w.c, m.c through -R) and not (h.h, the C++ header).
func TestReportDataGolden(t *testing.T) {
	d := Report(synthetic())
	d.AddSources(testSources)
	checkGolden(t, "synthetic.json", indented(t, d))
}

// loopsRecording samples loops-gcc12-O2 in its nested loops (matmul's
// innermost most), its inlined atoi and outside loops.
func loopsRecording(t *testing.T) string {
	var addrs []uint64
	for i := 0; i < 12; i++ {
		addrs = append(addrs, 0x1550, 0x1558, 0x1562)
	}
	for i := 0; i < 4; i++ {
		addrs = append(addrs, 0x1320, 0x13ed, 0x14ce)
	}
	addrs = append(addrs, 0x1106, 0x10b8, 0x15c0, 0x1501, 0x1060)
	return rectest.Fake(t, "../testdata/bin/loops-gcc12-O2", addrs...)
}

// TestReportDataLoops: the page data of a recording of a real binary
// analysed by bloop: loops with their extents from the structure, an
// inlined call, the source embedded through -R.
func TestReportDataLoops(t *testing.T) {
	p, err := profile.Build(loopsRecording(t), profile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := Report(p)
	d.AddSources(repoSources)
	got := indented(t, d)
	checkGolden(t, "loops.json", got)
	if !bytes.Contains(got, []byte(`"found": "../testdata/src/loops.c"`)) {
		t.Errorf("loops.c not embedded")
	}
}

// TestWriteReportDeterministic: the same profile gives the same bytes,
// and the page holds no unescaped name: json.Marshal escapes < > &, so
// the data cannot end its script element.
func TestWriteReportDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	if err := WriteReport(&a, synthetic(), testSources); err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(&b, synthetic(), testSources); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two pages of the same profile differ")
	}
	page := a.String()
	for _, s := range []string{nameScript, "<b id=", nameTemplate} {
		if strings.Contains(page, s) {
			t.Errorf("the page holds %q unescaped", s)
		}
	}
	if n := strings.Count(page, "</script>"); n != 3 {
		t.Errorf("%d </script> in the page, want 3 (enums, data and code)", n)
	}
	// The code and style (the data aside: sources may name URLs).
	i := strings.Index(page, `<script type="application/json"`)
	j := i + strings.Index(page[i:], "</script>")
	code := page[:i] + page[j:]
	for _, s := range []string{"http://", "https://", "@import", "url(", "src=", "href=\"http"} {
		if strings.Contains(code, s) {
			t.Errorf("the page refers to %q: it must fetch nothing", s)
		}
	}
}
