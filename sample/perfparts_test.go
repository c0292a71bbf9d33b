package sample

import (
	"path/filepath"
	"slices"
	"testing"

	"bloop/perfevent"
)

// TestPerfParts reads every committed perf.data file that has parts in
// parts of a few hundred bytes, each on its own goroutine: put back in
// part order, the samples (decoded) and the other records must be
// ScanPerf's, in ScanPerf's order.
func TestPerfParts(t *testing.T) {
	defer func(n int64) { perfevent.PartBytes = n }(perfevent.PartBytes)
	perfevent.PartBytes = 700
	files, _ := filepath.Glob("../perfevent/testdata/*.data")
	withParts := 0
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var parts Parts
			if err := SkimPerf(path, func(e Entry) error {
				if p, ok := e.(Parts); ok {
					parts = p
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if parts == nil {
				return // a pipe or compressed file: read in one piece
			}
			withParts++
			var want []string
			if err := ScanPerf(path, func(e Entry) error {
				switch e.(type) {
				case Meta, Blob, BuildID, *Lease:
				default:
					want = append(want, entryLine(e))
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			pp, err := OpenPerfParts(path, parts)
			if err != nil {
				t.Fatal(err)
			}
			defer pp.Close()
			if pp.Len() < 3 {
				t.Fatalf("%d parts of %d bytes: want at least 3", pp.Len(), perfevent.PartBytes)
			}
			got := make([][]string, pp.Len())
			errs := make(chan error, pp.Len())
			for i := range pp.Len() {
				go func() {
					errs <- pp.Scan(i, func(e Entry) error {
						if ps, ok := e.(*PerfSample); ok {
							s, err := ps.Sample()
							if err != nil {
								return err
							}
							e = s
						}
						got[i] = append(got[i], entryLine(e))
						return nil
					})
				}()
			}
			for range pp.Len() {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			if all := slices.Concat(got...); !slices.Equal(all, want) {
				t.Errorf("parts read %d entries, ScanPerf %d: not the same", len(all), len(want))
			}
			// ScanSamples: the samples through their own function, the
			// rest through f, in the same order.
			var bySamples []string
			for i := range pp.Len() {
				if err := pp.ScanSamples(i, func(ps *PerfSample) error {
					s, err := ps.Sample()
					if err != nil {
						return err
					}
					bySamples = append(bySamples, entryLine(s))
					return nil
				}, func(e Entry) error {
					if _, ok := e.(*PerfSample); ok {
						t.Fatal("a sample passed to f")
					}
					bySamples = append(bySamples, entryLine(e))
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			if !slices.Equal(bySamples, want) {
				t.Errorf("ScanSamples read %d entries, ScanPerf %d: not the same", len(bySamples), len(want))
			}
		})
	}
	if withParts == 0 {
		t.Error("no committed perf.data file has parts")
	}
}
