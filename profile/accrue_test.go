package profile

import (
	"path/filepath"
	"slices"
	"testing"

	"bloop/cache"
)

// TestAccruedIndex: reports of several recordings share a cache, each
// adding the procedures it samples to its modules' accrued entries (libc
// and the test programs are in several); each report must equal the one
// made without a cache, in either order of the recordings.
func TestAccruedIndex(t *testing.T) {
	bin, files := committedRecordings(t, true)
	cold := map[string]string{}
	for _, f := range files {
		p, err := Build(f, Options{ModuleDirs: []string{bin}, Jobs: 2})
		if err != nil {
			t.Fatal(err)
		}
		cold[f] = dumpProfile(t, p)
	}
	reversed := slices.Clone(files)
	slices.Reverse(reversed)
	for _, order := range [][]string{files, reversed} {
		c, err := cache.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range order {
			p, err := Build(f, Options{ModuleDirs: []string{bin}, Cache: c, Jobs: 2})
			if err != nil {
				t.Fatal(err)
			}
			if got := dumpProfile(t, p); got != cold[f] {
				t.Errorf("%s after the others accrued differs from its cold report:\n%s\n----\n%s", filepath.Base(f), got, cold[f])
			}
		}
	}
}

func TestMergeIndex(t *testing.T) {
	proc := func(name string) []*Elem { return []*Elem{{Kind: ElemProc, Name: name}} }
	a, b, b2, c := proc("a"), proc("b"), proc("b again"), proc("c")
	old := &scopeIndex{entries: []indexEntry{{0x10, 0x20, a}, {0x40, 0x50, b}}}
	fresh := &scopeIndex{entries: []indexEntry{{0x40, 0x48, b2}, {0x60, 0x70, c}, {0x20, 0x30, c}}}
	x := mergeIndex(old, fresh)
	want := []indexEntry{{0x10, 0x20, a}, {0x20, 0x30, c}, {0x40, 0x50, b}, {0x60, 0x70, c}}
	if !slices.EqualFunc(x.entries, want, func(p, q indexEntry) bool { return p.lo == q.lo && p.hi == q.hi && p.path[0] == q.path[0] }) {
		t.Errorf("merged %+v, want %+v", x.entries, want)
	}
	for _, tc := range []struct {
		asked, only, want []uint64
	}{
		{nil, []uint64{0x15, 0x35, 0x45}, []uint64{0x35}},
		{[]uint64{0x35}, []uint64{0x15, 0x35, 0x45, 0x80}, []uint64{0x80}},
		{nil, nil, nil},
	} {
		if got := missingAddrs(tc.asked, old, tc.only); !slices.Equal(got, tc.want) {
			t.Errorf("missing of %x asked %x: %x, want %x", tc.only, tc.asked, got, tc.want)
		}
	}
	asked, y := decodeAccrued(encodeAccrued([]uint64{3, 0x40, 0x1000}, x))
	if !slices.Equal(asked, []uint64{3, 0x40, 0x1000}) || y == nil || len(y.entries) != 4 || y.lookup(0x65)[0].Name != "c" {
		t.Errorf("accrued entry read back: %x, %+v", asked, y)
	}
	if asked, y := decodeAccrued([]byte(accruedMagic + "\xff")); asked != nil || y != nil {
		t.Errorf("a damaged entry read as %x, %v", asked, y)
	}
}
