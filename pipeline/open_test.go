package pipeline

import (
	"bytes"
	"testing"

	"bloop/dyninst"
	"bloop/loader"
	"bloop/structure"
)

func xmlOf(t *testing.T, img *loader.Image, opt Options) []byte {
	t.Helper()
	mod, _ := Analyze(img, opt)
	var buf bytes.Buffer
	if err := structure.WriteXML(&buf, []*structure.Module{mod}, false); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestOpenSkipsOnlyUnusedDescriptors: Open leaves descriptors out unless
// the thesis engine may run, and the output is the same as with them, for
// every corpus binary and engine (auto picks the thesis engine for the
// binaries without DWARF procedures, where Open must read them again).
// Compat mode's raw file names are asked for in both.
func TestOpenSkipsOnlyUnusedDescriptors(t *testing.T) {
	picked := map[Engine]int{}
	for _, bin := range corpusBinaries(t) {
		fulls := map[bool]*loader.Image{}
		for _, raw := range []bool{false, true} {
			full, err := loader.Open(bin, loader.Options{RawFileNames: raw})
			if err != nil {
				t.Fatal(err)
			}
			fulls[raw] = full
		}
		for _, opt := range []Options{{}, {Engine: DWARF}, {Engine: Heuristic}, {Dyninst: dyninst.Hpcstruct}} {
			full := fulls[opt.Dyninst != nil]
			img, err := Open(bin, loader.Options{}, opt)
			if err != nil {
				t.Fatal(err)
			}
			e := engineFor(img, opt)
			picked[e]++
			if e == Heuristic && len(img.Descriptors) != len(full.Descriptors) {
				t.Errorf("%s %+v: thesis engine without its %d descriptors", bin, opt, len(full.Descriptors))
			}
			if e != Heuristic && len(img.Descriptors) != 0 {
				t.Errorf("%s %+v: %d descriptors read for the %v engine", bin, opt, len(img.Descriptors), e)
			}
			if !bytes.Equal(xmlOf(t, img, opt), xmlOf(t, full, opt)) {
				t.Errorf("%s %+v: output differs without descriptors", bin, opt)
			}
		}
	}
	if picked[Heuristic] == 0 || picked[Hybrid] == 0 || picked[DWARF] == 0 {
		t.Errorf("engines picked %v: the corpus should exercise each", picked)
	}
}
