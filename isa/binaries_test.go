package isa

import (
	"path/filepath"
	"testing"
)

// crossBinaries lists the binaries of one architecture the decoders are
// checked against objdump on: the hpcstruct references of ../shared
// (named -<triple arch>-) and the repository's cross corpus.
func crossBinaries(t *testing.T, refArch, corpusArch string) []string {
	bins, _ := filepath.Glob("../../shared/hpcstruct-refs-arch/bin/*-" + refArch + "-*")
	corpus, _ := filepath.Glob("../testdata/bin-" + corpusArch + "/*-O[0-9]")
	bins = append(bins, corpus...)
	if len(bins) == 0 {
		t.Fatal("no " + corpusArch + " binaries")

	}
	return bins
}
