package pipeline

import (
	"maps"
	"path/filepath"
	"testing"

	"bloop/dyninst"
	"bloop/loader"
	"bloop/par"
)

// allClaimed is the definition claimedEntries computes cheaply: the
// entries that any procedure's graph continues into, other than its own.
func allClaimed(pl *plan) map[uint64]bool {
	img := pl.img
	continued := make([][]uint64, len(img.Funcs))
	par.For(2, len(img.Funcs), func(i int) {
		if g, _, err := pl.graph(i); err == nil && g != nil {
			continued[i] = g.Continued
		}
	})
	claimed := map[uint64]bool{}
	for i, ts := range continued {
		for _, t := range ts {
			if t != img.Funcs[i].Addr && img.FuncAt(t) != nil { // not padding
				claimed[t] = true
			}
		}
	}
	return claimed
}

// TestClaimedEntries: building the graphs of only the procedures that can
// hold a call to the next instruction (in compat mode those whose parse,
// with every call but the named ones taken to return, ran past their
// extent: parseFacts.runsOn) finds the same claimed entries as building
// all of them, on every corpus and reference binary and on the Debian
// binaries that are installed (python3.11 has one; libc.so.6 has parses
// that run on after calls to its own procedures and without a call).
func TestClaimedEntries(t *testing.T) {
	bins := corpusBinaries(t)
	for _, dir := range []string{"../../shared/hpcstruct-refs/bin", "../../shared/hpctoolkit-tests/bin", "../testdata/bin-ppc64le"} {
		more, _ := filepath.Glob(filepath.Join(dir, "*"))
		bins = append(bins, more...)
	}
	bins = append(bins, "/usr/bin/python3.11", "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30", "/usr/lib/x86_64-linux-gnu/libc.so.6")
	found := 0
	for _, bin := range bins {
		img, err := loader.Open(bin, loader.Options{SkipDescriptors: true})
		if err != nil || img.Arch != loader.AMD64 && img.Arch != loader.PPC64LE {
			continue
		}
		// Compat mode also parses on past the ends of extents.
		for _, compat := range []bool{false, true} {
			if img.Arch == loader.PPC64LE && !compat {
				continue
			}
			if compat {
				// As Open reads it for compat mode (Dyninst's stubs).
				if img, err = Open(bin, loader.Options{}, Options{Dyninst: dyninst.Hpcstruct}); err != nil {
					t.Fatal(err)
				}
			}
			pl := newPlan(img, Options{Dyninst: policyIf(compat)}, 2)
			want := allClaimed(pl)
			got := map[uint64]bool{}
			for a := range pl.claimed {
				got[a] = true
			}
			if !maps.Equal(got, want) {
				t.Errorf("%s, compat %v: claimed %v, want %v", bin, compat, got, want)
			}
			found += len(want)
		}
	}
	if found == 0 {
		t.Fatal("no binary with a claimed entry")
	}
}
