package pipeline

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/goldentest"
	"bloop/loader"
	"bloop/structure"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

const (
	corpusBin    = "../testdata/bin"
	corpusGolden = "../testdata/golden"
)

// corpus is one directory of corpus binaries and the one of their goldens.
type corpus struct{ bin, golden string }

// corpora are the x86-64 corpus and the cross corpus: the same programs
// built for arm64 and ppc64le (testdata/Makefile TARGET=...).
var corpora = []corpus{
	{corpusBin, corpusGolden},
	{"../testdata/bin-arm64", "../testdata/golden-arm64"},
	{"../testdata/bin-ppc64le", "../testdata/golden-ppc64le"},
}

// corpusStructure runs bloop on one corpus binary with the module path set
// to "testdata/<dir>/<name>", so the output does not depend on where the
// repository is checked out.
func corpusStructure(t *testing.T, bin string) (xml, js []byte) {
	img, err := loader.Open(bin, loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(bin)
	rel := "testdata/" + filepath.Base(filepath.Dir(bin)) + "/" + name
	img.Path = rel
	// The DWARF engine (or the thesis engine for binaries without DWARF
	// procedures): the default hybrid mode also reads the sources the line
	// table names, which would make the goldens depend on the machine's
	// headers; its loop lines are tested against source truth in eval.
	engine := DWARF
	if !img.HasInlineInfo() && len(img.Procs) == 0 {
		engine = Heuristic
	}
	mod, errs := Analyze(img, Options{Workers: 2, Engine: engine})
	for _, e := range errs {
		t.Errorf("%s: %v", name, e)
	}
	mod.Path = rel
	var xb, jb bytes.Buffer
	if err := structure.WriteXML(&xb, []*structure.Module{mod}, false); err != nil {
		t.Fatal(err)
	}
	if err := structure.WriteJSON(&jb, []*structure.Module{mod}); err != nil {
		t.Fatal(err)
	}
	return xb.Bytes(), jb.Bytes()
}

// corpusBinaries lists the x86-64 corpus binaries, skipping the test when
// there are none.
func corpusBinaries(t *testing.T) []string {
	return binariesIn(t, corpusBin)
}

func binariesIn(t *testing.T, dir string) []string {
	all, _ := filepath.Glob(filepath.Join(dir, "*"))
	var bins []string
	for _, b := range all {
		if filepath.Base(b) != "SHA256SUMS" {
			bins = append(bins, b)
		}
	}
	if len(bins) == 0 {
		t.Fatal("no corpus binaries")
	}
	return bins
}

// TestCorpusGolden compares bloop's output for every corpus binary with the
// reviewed goldens in testdata/golden: <name>.hpcstruct (XML, not
// pretty-printed) and <name>.json for each of them. All of them together
// are about 6.3 MB (1.5 MB XML, 4.8 MB JSON), so every binary keeps both.
// Run
//
//	go test ./pipeline -run CorpusGolden -update
//
// to rewrite them after a deliberate change, then review the diff (bloop
// diff old new) and update the review in testdata/README.md if needed.
func TestCorpusGolden(t *testing.T) {
	for _, c := range corpora {
		t.Run(filepath.Base(c.bin), func(t *testing.T) { corpusGolden1(t, c) })
	}
}

func corpusGolden1(t *testing.T, c corpus) {
	bins := binariesIn(t, c.bin)
	if *update {
		if err := os.MkdirAll(c.golden, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range bins {
		name := filepath.Base(b)
		t.Run(name, func(t *testing.T) {
			xml, js := corpusStructure(t, b)
			check := func(ext string, got []byte) {
				goldentest.Check(t, filepath.Join(c.golden, name+ext), got, *update)
			}
			check(".hpcstruct", xml)
			check(".json", js)
		})
	}
	if !*update {
		// A golden without a binary is stale.
		files, _ := filepath.Glob(filepath.Join(c.golden, "*"))
		for _, f := range files {
			base := filepath.Base(f)
			name := strings.TrimSuffix(strings.TrimSuffix(base, ".hpcstruct"), ".json")
			if _, err := os.Stat(filepath.Join(c.bin, name)); err != nil || name == base {
				t.Errorf("%s has no corpus binary", f)
			}
		}
	}
}
