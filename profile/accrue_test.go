package profile

import (
	"maps"
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
	old := &scopeIndex{entries: []indexEntry{{0x10, 0x20, a}, {0x40, 0x50, b}},
		outside: map[uint64]lineRow{0x8: {file: "a.c", line: 3, ok: true}, 0x9: {}}}
	fresh := &scopeIndex{entries: []indexEntry{{0x40, 0x48, b2}, {0x60, 0x70, c}, {0x20, 0x30, c}},
		outside: map[uint64]lineRow{0x58: {file: "b.c", line: 7, ok: true}}}
	x := mergeIndex(old, fresh)
	wantOutside := map[uint64]lineRow{0x8: {file: "a.c", line: 3, ok: true}, 0x9: {}, 0x58: {file: "b.c", line: 7, ok: true}}
	if !maps.Equal(x.outside, wantOutside) {
		t.Errorf("merged lines outside the scopes %v, want %v", x.outside, wantOutside)
	}
	want := []indexEntry{{0x10, 0x20, a}, {0x20, 0x30, c}, {0x40, 0x50, b}, {0x60, 0x70, c}}
	if !slices.EqualFunc(x.entries, want, func(p, q indexEntry) bool { return p.lo == q.lo && p.hi == q.hi && p.path[0] == q.path[0] }) {
		t.Errorf("merged %+v, want %+v", x.entries, want)
	}
	// 0x8 and 0x9 are kept outside the scopes (0x9 with no line), 0x58
	// is not: only the merged index has it.
	for _, tc := range []struct {
		x          *scopeIndex
		only, want []uint64
	}{
		{old, []uint64{0x8, 0x9, 0x15, 0x35, 0x45, 0x58}, []uint64{0x35, 0x58}},
		{x, []uint64{0x8, 0x9, 0x15, 0x35, 0x45, 0x58, 0x80}, []uint64{0x35, 0x80}},
		{nil, []uint64{0x15}, []uint64{0x15}},
		{old, nil, nil},
	} {
		if got := missingAddrs(tc.x, tc.only); !slices.Equal(got, tc.want) {
			t.Errorf("missing of %x: %x, want %x", tc.only, got, tc.want)
		}
	}
	y := decodeAccrued(encodeAccrued(x))
	if y == nil || len(y.entries) != 4 || y.lookup(0x65)[0].Name != "c" || !maps.Equal(y.outside, wantOutside) {
		t.Errorf("accrued entry read back: %+v", y)
	}
	for _, b := range []string{accruedMagic + "\xff", "bloop accrued index 1\n\x00"} {
		if y := decodeAccrued([]byte(b)); y != nil {
			t.Errorf("entry %q read as %v, want none", b, y)
		}
	}
}
