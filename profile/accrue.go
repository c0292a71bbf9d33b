package profile

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sort"

	"bloop/cache"
	"bloop/internal/varint"
	"bloop/source"
)

// accruedMagic starts an accrued entry: the sorted addresses reports
// asked for so far (a count, then deltas, as unsigned varints), then
// the index of the procedures holding them in encodeIndex's form.
const accruedMagic = "bloop accrued index 1\n"

// accrue returns the index of the procedures holding the sorted
// addresses only, from the module's accrued entry at key: the
// procedures analysed for earlier reports are taken from it, the others
// analysed (analyze) and added to it. Each procedure is analysed as the
// whole module's analysis gives it, so an index accrued over reports
// answers each address as the analysis of that report's addresses alone
// (profile/TestAccruedIndex).
func accrue(c *cache.Cache, key string, only []uint64, analyze func([]uint64) *scopeIndex, finder *source.Finder) *scopeIndex {
	asked, old := decodeAccrued(readEntry(c, key))
	missing := missingAddrs(asked, old, only)
	if len(missing) == 0 {
		return old
	}
	fresh := analyze(missing)
	if fresh == nil {
		return old
	}
	x := mergeIndex(old, fresh)
	asked = append(asked, missing...)
	slices.Sort(asked)
	writeEntry(c, key, encodeAccrued(slices.Compact(asked), x), finder.Probed()...)
	return x
}

// missingAddrs are the addresses of only that no earlier report asked
// for and that no procedure analysed for one holds.
func missingAddrs(asked []uint64, x *scopeIndex, only []uint64) []uint64 {
	var out []uint64
	for _, a := range only {
		if _, found := slices.BinarySearch(asked, a); found || x.lookup(a) != nil {
			continue
		}
		out = append(out, a)
	}
	return out
}

// mergeIndex adds to old the entries of fresh that overlap none of its
// own: a procedure analysed again (an address in a gap of its scopes)
// keeps the scopes old has for it.
func mergeIndex(old, fresh *scopeIndex) *scopeIndex {
	if old == nil {
		return fresh
	}
	x := &scopeIndex{entries: slices.Clone(old.entries)}
	es := old.entries
	for _, e := range fresh.entries {
		// The first entry of old ending after e begins.
		i := sort.Search(len(es), func(i int) bool { return es[i].hi > e.lo })
		if i < len(es) && es[i].lo < e.hi {
			continue
		}
		x.entries = append(x.entries, e)
	}
	x.sort()
	return x
}

func encodeAccrued(asked []uint64, x *scopeIndex) []byte {
	b := []byte(accruedMagic)
	b = binary.AppendUvarint(b, uint64(len(asked)))
	var prev uint64
	for _, a := range asked {
		b = binary.AppendUvarint(b, a-prev)
		prev = a
	}
	return append(b, encodeIndex(x)...)
}

// decodeAccrued reads an accrued entry; nothing (nil, nil) when there
// is none or it is damaged (it is then analysed anew and replaced).
func decodeAccrued(b []byte) ([]uint64, *scopeIndex) {
	rest, ok := bytes.CutPrefix(b, []byte(accruedMagic))
	if !ok {
		return nil, nil
	}
	r := &varint.Reader{B: rest}
	asked := make([]uint64, r.Count())
	var prev uint64
	for i := range asked {
		prev += r.Uint()
		asked[i] = prev
	}
	if r.Err != nil {
		return nil, nil
	}
	x, err := decodeIndex(r.B)
	if err != nil {
		return nil, nil
	}
	return asked, x
}
