package sample

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"bloop/perfevent"
)

// TestSkimPerf reads every committed perf.data file (perfevent's
// testdata: compressed and pipe-mode ones among them) with ScanPerf and
// SkimPerf: the skim must pass the same entries but the samples and the
// Lease, and one KernelFrames where the first sample with kernel frames
// was (none when no sample has them).
func TestSkimPerf(t *testing.T) {
	files, _ := filepath.Glob("../perfevent/testdata/*.data")
	if len(files) < 6 {
		t.Fatalf("committed perf.data files: %v", files)
	}
	withKernel := 0
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var want []string
			samples, seen := 0, false
			if err := ScanPerf(path, func(e Entry) error {
				switch v := e.(type) {
				case *Sample:
					samples++
					if !seen && (v.Kernel || slices.Contains(v.Callchain, perfevent.ContextKernel)) {
						seen = true
						want = append(want, entryLine(KernelFrames{}))
					}
				case *Lease:
				default:
					want = append(want, entryLine(e))
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			var got []string
			var parts Parts
			if err := SkimPerf(path, func(e Entry) error {
				if p, ok := e.(Parts); ok {
					parts = p
					return nil
				}
				if parts != nil {
					t.Errorf("%s after the Parts, which come last", entryLine(e))
				}
				got = append(got, entryLine(e))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if parts != nil && (len(parts) < 2 || !slices.IsSorted(parts) || parts[0] <= 0) {
				t.Errorf("parts %v: want ascending offsets into the file, at least a start and an end", parts)
			}
			sortBuildIDs(want)
			sortBuildIDs(got)
			if !slices.Equal(got, want) {
				t.Errorf("skim:\n%q\nfull scan, samples and lease left out:\n%q", got, want)
			}
			if samples == 0 {
				t.Error("no samples")
			}
			if seen {
				withKernel++
			}
		})
	}
	if withKernel == 0 {
		t.Error("no file with kernel frames: the KernelFrames entry is not tested")
	}
}

// entryLine renders an entry with its type.
func entryLine(e Entry) string { return fmt.Sprintf("%T %+v", e, e) }

// sortBuildIDs sorts the BuildID entries that end a scan: ScanPerf
// passes them in a map's order.
func sortBuildIDs(lines []string) {
	i := len(lines)
	for i > 0 && strings.HasPrefix(lines[i-1], "sample.BuildID ") {
		i--
	}
	slices.Sort(lines[i:])
}
