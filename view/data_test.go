package view

import (
	"bytes"
	"encoding/json"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/goldentest"
	"bloop/internal/rectest"
	"bloop/internal/viewtest"
	"bloop/profile"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// The shared inputs (internal/viewtest), by their old names here.
const (
	nameTemplate = viewtest.NameTemplate
	nameScript   = viewtest.NameScript
)

var synthetic = viewtest.Synthetic

// checkGolden compares got with testdata/name; -update rewrites it.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldentest.Check(t, filepath.Join("testdata", name), got, *update)
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
