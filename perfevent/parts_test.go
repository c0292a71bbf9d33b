package perfevent

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// skimmed is what a walk passed: each record formatted, a raw sample
// decoded first.
func skimmed(t *testing.T, r Record) string {
	if raw, ok := r.(*RawSample); ok {
		s, err := raw.Decode()
		if err != nil {
			t.Fatal(err)
		}
		return Format(s)
	}
	return Format(r)
}

// TestParts: a file read in parts, side by side, passes the records a
// Skim passes, in the same order once the parts are put end to end; a
// stream or compressed records make a file one part.
func TestParts(t *testing.T) {
	defer func(n int64) { PartBytes = n }(PartBytes)
	PartBytes = 700
	for _, tc := range []struct {
		file  string
		parts bool
	}{
		{"plain.data", true}, {"fp.data", true}, {"dwarf.data", true},
		{"pipe.data", false}, {"zstd.data", false}, {"pipe-zstd-dwarf.data", false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := Open(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var whole []string
			if err := f.Skim(func(r Record) error { whole = append(whole, skimmed(t, r)); return nil }); err != nil {
				t.Fatal(err)
			}
			parts := f.Parts()
			if !tc.parts {
				if parts != nil {
					t.Fatalf("parts %v, want none", parts)
				}
				return
			}
			if len(parts) < 4 {
				t.Fatalf("parts %v: want at least 3 of %d bytes", parts, PartBytes)
			}
			// Another File of the same file, as a report opens one.
			g, err := Open(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if err := g.SetParts(parts); err != nil {
				t.Fatal(err)
			}
			got := make([][]string, len(parts)-1)
			errs := make([]error, len(got))
			var wg sync.WaitGroup
			for i := range got {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = g.SkimPart(i, func(r Record) error {
						if g.InFile() {
							return fmt.Errorf("part %d: a record kept in the file", i)
						}
						got[i] = append(got[i], skimmed(t, r))
						return nil
					})
				}()
			}
			wg.Wait()
			var all []string
			for i := range got {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				all = append(all, got[i]...)
			}
			if a, b := strings.Join(whole, "\n"), strings.Join(all, "\n"); a != b {
				t.Errorf("the parts' records differ from Skim's:\n%s\n----\n%s", a, b)
			}
			var again []string
			if err := g.SkimPart(1, func(r Record) error { again = append(again, skimmed(t, r)); return nil }); err != nil {
				t.Fatal(err)
			}
			if strings.Join(again, "\n") != strings.Join(got[1], "\n") {
				t.Error("part 1 differs read again")
			}
		})
	}
}

// TestSetParts refuses parts that do not cover the data in order.
func TestSetParts(t *testing.T) {
	f, err := Open(filepath.Join("testdata", "fp.data"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start, end := f.dataStart, f.dataEnd
	for _, bad := range [][]int64{
		nil,
		{start},
		{start + 8, end},
		{start, end - 8},
		{start, start + 64, start + 64, end},
		{start, end + 8},
		{start - 8, end},
	} {
		if err := f.SetParts(bad); err == nil {
			t.Errorf("SetParts(%v) of data %#x-%#x: no error", bad, start, end)
		}
	}
	if err := f.SetParts([]int64{start, end}); err != nil {
		t.Error(err)
	}
	if err := f.SkimPart(1, func(Record) error { return nil }); err == nil {
		t.Error("SkimPart of a part beyond the last: no error")
	}
}
