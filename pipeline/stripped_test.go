package pipeline

import (
	"debug/elf"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"bloop/internal/testenv"
	"bloop/loader"
	"bloop/structure"
)

// strippedShare is what a stripped analysis found of the unstripped one.
type strippedShare struct {
	entries, entriesFound int // function symbols; those that are procedure starts
	loops, loopsFound     int // loops of the unstripped analysis; those found again at the same header
	loopsExtra            int // loops of the stripped analysis beyond the unstripped one's at their header
	procs, procsRight     int // procedures of the stripped analysis; those at an unstripped one's entry
}

func (s *strippedShare) add(o strippedShare) {
	s.entries += o.entries
	s.entriesFound += o.entriesFound
	s.loops += o.loops
	s.loopsFound += o.loopsFound
	s.loopsExtra += o.loopsExtra
	s.procs += o.procs
	s.procsRight += o.procsRight
}

func (s strippedShare) entryPct() float64 {
	return 100 * float64(s.entriesFound) / float64(max(s.entries, 1))
}

// loopPct is the share of loops equal to the unstripped analysis's: a
// loop missing and a loop more (the same header nested twice) both count
// against it.
func (s strippedShare) loopPct() float64 {
	return 100 * float64(s.loopsFound-s.loopsExtra) / float64(max(s.loops, 1))
}

func (s strippedShare) procPct() float64 {
	return 100 * float64(s.procsRight) / float64(max(s.procs, 1))
}

// TestStrippedRecovery strips every corpus binary (strip, and strip with
// .eh_frame and .eh_frame_hdr removed too) and measures, against the
// unstripped file, the share of its functions (STT_FUNC symbols in
// executable sections, PLT excluded, sized or not: _init, _fini and crt's
// frame_dummy have no size; and ppc64's glink resolver) whose entry is a procedure start of the
// stripped analysis, and the share of its loops the stripped analysis
// finds at the same header, less the loops it has there beyond them. Both analyses use the DWARF engine
// without normalization, so loops are never merged. The figures are
// pinned a little below their measured values.
func TestStrippedRecovery(t *testing.T) {
	strip := testenv.Need(t, "strip")
	bins := corpusBinaries(t)
	variants := []struct {
		name string
		args []string
		pins map[string][3]float64 // compiler (or "all") -> minimum entries %, loops %, procedures at an entry %
	}{
		{"strip", nil, map[string][3]float64{"all": {99.5, 99.5, 99}}},
		{"strip -R .eh_frame", []string{"-R", ".eh_frame", "-R", ".eh_frame_hdr"}, map[string][3]float64{"all": {99.5, 99.5, 99}}},
	}
	for _, v := range variants {
		t.Run(strings.ReplaceAll(v.name, " ", "_"), func(t *testing.T) {
			per := strippedShares(t, strip, v.args, bins)
			for _, k := range slices.Sorted(maps.Keys(per)) {
				checkStripped(t, k, per[k], v.pins)
			}
		})
	}
}

// strippedShares strips each binary with args, in parallel, and sums the
// shares measureStripped finds, for all of them ("all") and by compiler.
func strippedShares(t *testing.T, strip string, args, bins []string) map[string]*strippedShare {
	var mu sync.Mutex
	per := map[string]*strippedShare{"all": {}}
	t.Run("bins", func(t *testing.T) {
		for _, b := range bins {
			t.Run(filepath.Base(b), func(t *testing.T) {
				t.Parallel()
				s := measureStripped(t, strip, args, b)
				mu.Lock()
				defer mu.Unlock()
				for _, k := range []string{"all", compilerOf(b)} {
					if per[k] == nil {
						per[k] = &strippedShare{}
					}
					per[k].add(s)
				}
			})
		}
	})
	return per
}

// checkStripped logs the shares of key and fails below its pins, if any.
func checkStripped(t *testing.T, key string, s *strippedShare, pins map[string][3]float64) {
	t.Helper()
	t.Logf("%-18s entries %6.2f%% (%d of %d), loops %6.2f%% (%d of %d, %d more); procedures at an entry %6.2f%% (%d of %d)",
		key, s.entryPct(), s.entriesFound, s.entries, s.loopPct(), s.loopsFound, s.loops, s.loopsExtra, s.procPct(), s.procsRight, s.procs)
	if pin, ok := pins[key]; ok && (s.entryPct() < pin[0] || s.loopPct() < pin[1] || s.procPct() < pin[2]) {
		t.Errorf("%s: entries %.2f%% (pinned >= %.2f%%), loops %.2f%% (pinned >= %.2f%%), procedures at an entry %.2f%% (pinned >= %.2f%%)",
			key, s.entryPct(), pin[0], s.loopPct(), pin[1], s.procPct(), pin[2])
	}
}

// compilerOf is the compiler part of a corpus binary's name.
func compilerOf(bin string) string {
	for _, c := range []string{"gcc12", "clang14", "gfortran12"} {
		if strings.Contains(filepath.Base(bin), "-"+c+"-") {
			return c
		}
	}
	return "other"
}

// measureStripped strips bin with args into a temporary directory and
// compares the two analyses.
func measureStripped(t *testing.T, strip string, args []string, bin string) strippedShare {
	stripped := filepath.Join(t.TempDir(), filepath.Base(bin))
	if out, err := exec.Command(strip, append(append([]string{}, args...), "-o", stripped, bin)...).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	entries := append(funcSymbols(t, bin), glinkResolver(t, strings.TrimSuffix(strip, "strip")+"nm", bin)...)
	loops, procs := analyseStarts(t, bin, DWARF)
	sloops, sprocs := analyseStarts(t, stripped, Auto)
	var s strippedShare
	for a := range sprocs {
		s.procs++
		if procs[a] {
			s.procsRight++
		} else {
			t.Logf("%s: procedure at %#x is no procedure of the unstripped file", filepath.Base(bin), a)
		}
	}
	for _, a := range entries {
		s.entries++
		if sprocs[a] {
			s.entriesFound++
		} else {
			t.Logf("%s: function at %#x not found", filepath.Base(bin), a)
		}
	}
	for a, n := range loops {
		s.loops += n
		s.loopsFound += min(n, sloops[a])
		if sloops[a] < n {
			t.Logf("%s: %d of %d loops at %#x not found", filepath.Base(bin), n-sloops[a], n, a)
		}
	}
	for a, n := range sloops {
		if n > loops[a] {
			s.loopsExtra += n - loops[a]
			t.Logf("%s: %d loops at %#x, %d unstripped", filepath.Base(bin), n, a, loops[a])
		}
	}
	return s
}

// glinkResolver returns the entry of ppc64's lazy-binding resolver, which
// has no symbol, where binutils' nm (the strip's own) finds it: its
// synthetic __glink_PLTresolve. None for other files.
func glinkResolver(t *testing.T, nm, bin string) []uint64 {
	out, err := exec.Command(nm, "--synthetic", bin).Output()
	if err != nil {
		t.Fatalf("%s --synthetic %s: %v", nm, bin, err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[2] == "__glink_PLTresolve" {
			a, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				t.Fatalf("%s --synthetic %s: %q: %v", nm, bin, l, err)
			}
			return []uint64{a}
		}
	}
	return nil
}

// funcSymbols returns the entries of bin's function symbols that lie in
// an executable section other than the PLT's.
func funcSymbols(t *testing.T, bin string) []uint64 {
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	seen := map[uint64]bool{}
	var out []uint64
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section == elf.SHN_UNDEF || int(s.Section) >= len(f.Sections) || seen[s.Value] {
			continue
		}
		sec := f.Sections[s.Section]
		if sec.Flags&elf.SHF_EXECINSTR == 0 || (&loader.Section{Name: sec.Name}).IsPLT() {
			continue
		}
		seen[s.Value] = true
		out = append(out, s.Value)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// analyseStarts runs the pipeline on bin with engine and returns its loop
// headers, with the number of loops at each, and procedure entries. The stripped file gets the engine bloop
// chooses for it by default (the thesis engine: no DWARF); the DWARF
// engine there, without lines, writes two loop nests of stl-gcc12-O3's
// __merge_sort_with_buffer with fewer loops.
func analyseStarts(t *testing.T, bin string, engine Engine) (loops map[uint64]int, procs map[uint64]bool) {
	img, err := loader.Open(bin, loader.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	loops, procs = map[uint64]int{}, map[uint64]bool{}
	_, err = Run(img, Options{Workers: 1, Engine: engine}, func(_ string, p *structure.Scope) error {
		procs[p.Entry] = true
		structure.Walk(p, func(s *structure.Scope) {
			if s.Kind == structure.Loop {
				loops[s.Entry]++
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return loops, procs
}
