package dwarfscan

import (
	"path/filepath"
	"reflect"
	"testing"
)

// TestBuilderPrefixes extends a Builder in uneven steps over each corpus
// file's .debug_info: every snapshot holds exactly the units that lie
// wholly in the prefix so far, reads them as New's Data does, and refuses
// offsets beyond them; the last snapshot is New's.
func TestBuilderPrefixes(t *testing.T) {
	for _, path := range corpus(t) {
		s, reason, err := openELF(path)
		if err != nil {
			t.Fatal(err)
		}
		if reason != "" || len(s.Info) == 0 {
			continue
		}
		whole, err := New(s)
		if err != nil {
			t.Fatalf("%s: New: %v", path, err)
		}
		b := NewBuilder(s)
		step := len(s.Info)/7 + 13
		for n := 0; ; n += step {
			d, err := b.Extend(n)
			if err != nil {
				t.Fatalf("%s: Extend(%d): %v", path, n, err)
			}
			var want []Unit
			for _, u := range whole.Units() {
				if u.End <= uint64(n) {
					want = append(want, u)
				}
			}
			if !reflect.DeepEqual(d.Units(), want) && !(len(want) == 0 && len(d.Units()) == 0) {
				t.Fatalf("%s: Extend(%d): %d units, want %d", path, n, len(d.Units()), len(want))
			}
			if k := len(want); k > 0 {
				if got, w := readAll(t, d, k-1), readAll(t, whole, k-1); !reflect.DeepEqual(got, w) {
					t.Fatalf("%s: Extend(%d): unit %d reads differently", path, n, k-1)
				}
			}
			if k := len(want); k < len(whole.Units()) {
				if err := d.Reader().Seek(whole.Units()[k].first); err == nil {
					t.Errorf("%s: Extend(%d): seek into a unit not yet extended over succeeded", path, n)
				}
			}
			if n >= len(s.Info) {
				if !reflect.DeepEqual(d.Units(), whole.Units()) {
					t.Errorf("%s: the last snapshot is not New's", filepath.Base(path))
				}
				break
			}
		}
	}
}
