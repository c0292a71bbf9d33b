package profile

import (
	"bytes"
	"maps"
	"slices"
	"sort"

	"bloop/cache"
	"bloop/source"
)

// accruedMagic starts an accrued entry, the index of the procedures
// holding the addresses reports asked for so far, with the lines of
// those outside them, in encodeIndex's form. (Version 1 also listed the
// addresses, and lost the lines of the earlier reports' when it grew.)
const accruedMagic = "bloop accrued index 2\n"

// accrue returns the index of the procedures holding the sorted
// addresses only, from the module's accrued entry at key: the
// procedures analysed for earlier reports are taken from it, the others
// analysed (analyze) and added to it. Each procedure is analysed as the
// whole module's analysis gives it, so an index accrued over reports
// answers each address as the analysis of that report's addresses alone
// (profile/TestAccruedIndex).
func accrue(c *cache.Cache, key string, only []uint64, analyze func([]uint64) *scopeIndex, finder *source.Finder) *scopeIndex {
	old := decodeAccrued(readEntry(c, key))
	missing := missingAddrs(old, only)
	if len(missing) == 0 {
		return old
	}
	fresh := analyze(missing)
	if fresh == nil {
		return old
	}
	x := mergeIndex(old, fresh)
	writeEntry(c, key, encodeAccrued(x), finder.Probed()...)
	return x
}

// missingAddrs are the addresses of only that x answers neither with
// the scopes of a procedure analysed nor with a line kept from the
// analysis that found them outside every procedure.
func missingAddrs(x *scopeIndex, only []uint64) []uint64 {
	var out []uint64
	for _, a := range only {
		if x.lookup(a) != nil {
			continue
		}
		if _, kept := x.lineOutside(a); kept {
			continue
		}
		out = append(out, a)
	}
	return out
}

// mergeIndex adds to old the entries of fresh that overlap none of its
// own: a procedure analysed again (an address in a gap of its scopes)
// keeps the scopes old has for it. The kept lines of the addresses
// outside the scopes are those of both: lost, every later report whose
// frames one of them is read the module's DWARF again.
func mergeIndex(old, fresh *scopeIndex) *scopeIndex {
	if old == nil {
		return fresh
	}
	x := &scopeIndex{entries: slices.Clone(old.entries)}
	if len(old.outside)+len(fresh.outside) > 0 {
		x.outside = make(map[uint64]lineRow, len(old.outside)+len(fresh.outside))
		maps.Copy(x.outside, old.outside)
		maps.Copy(x.outside, fresh.outside)
	}
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

func encodeAccrued(x *scopeIndex) []byte {
	return append([]byte(accruedMagic), encodeIndex(x)...)
}

// decodeAccrued reads an accrued entry; nil when there is none or it is
// damaged or of another version (it is then analysed anew and replaced).
func decodeAccrued(b []byte) *scopeIndex {
	rest, ok := bytes.CutPrefix(b, []byte(accruedMagic))
	if !ok {
		return nil
	}
	x, err := decodeIndex(rest)
	if err != nil {
		return nil
	}
	return x
}
