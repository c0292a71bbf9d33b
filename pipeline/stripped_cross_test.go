package pipeline

import (
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// TestStrippedRecoveryCross is TestStrippedRecovery for the aarch64 and
// ppc64le corpus, stripped with the cross binutils' strip: the share of
// function entries and loops the analysis of the stripped files finds,
// and of its procedures that start at a function's entry, pinned a little
// below the measured values (the issue asked for 98% and 95%).
func TestStrippedRecoveryCross(t *testing.T) {
	arches := []struct {
		name, strip, dir string
		pins             map[string][3]float64 // strip variant -> minimum entries %, loops %, procedures at an entry %
	}{
		{"arm64", "aarch64-linux-gnu-strip", "../testdata/bin-arm64", map[string][3]float64{"strip": {99.5, 99.5, 95.5}, "strip -R .eh_frame": {99.5, 99.5, 89}}},
		{"ppc64le", "powerpc64le-linux-gnu-strip", "../testdata/bin-ppc64le", map[string][3]float64{"strip": {99.5, 99.5, 97.5}, "strip -R .eh_frame": {99.5, 99.5, 90.5}}},
	}
	variants := []struct {
		name string
		args []string
	}{
		{"strip", nil},
		{"strip -R .eh_frame", []string{"-R", ".eh_frame", "-R", ".eh_frame_hdr"}},
	}
	for _, a := range arches {
		t.Run(a.name, func(t *testing.T) {
			strip, err := exec.LookPath(a.strip)
			if err != nil {
				t.Skipf("no %s", a.strip)
			}
			bins := binariesIn(t, a.dir)
			for _, v := range variants {
				t.Run(strings.ReplaceAll(v.name, " ", "_"), func(t *testing.T) {
					var mu sync.Mutex
					per := map[string]*strippedShare{"all": {}}
					t.Run("bins", func(t *testing.T) {
						for _, b := range bins {
							t.Run(filepath.Base(b), func(t *testing.T) {
								t.Parallel()
								s := measureStripped(t, strip, v.args, b)
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
					keys := make([]string, 0, len(per))
					for k := range per {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					for _, k := range keys {
						s := per[k]
						t.Logf("%s %-10s entries %6.2f%% (%d of %d), loops %6.2f%% (%d of %d); procedures at an entry %6.2f%% (%d of %d)",
							a.name, k, s.entryPct(), s.entriesFound, s.entries, s.loopPct(), s.loopsFound, s.loops, s.procPct(), s.procsRight, s.procs)
					}
					s, pin := per["all"], a.pins[v.name]
					if s.entryPct() < pin[0] || s.loopPct() < pin[1] || s.procPct() < pin[2] {
						t.Errorf("%s: entries %.2f%% (pinned >= %.2f%%), loops %.2f%% (pinned >= %.2f%%), procedures at an entry %.2f%% (pinned >= %.2f%%)",
							a.name, s.entryPct(), pin[0], s.loopPct(), pin[1], s.procPct(), pin[2])
					}
				})
			}
		})
	}
}
