package loader

import (
	"cmp"
	"slices"
	"sort"
)

// Range is a half-open address interval [Lo, Hi).
type Range struct{ Lo, Hi uint64 }

// MergeRanges sorts and coalesces adjacent or overlapping ranges, in place.
// Every stage that collects address intervals (statement ranges, coverage,
// unwinder protection zones) uses this one.
func MergeRanges(rs []Range) []Range {
	if len(rs) < 2 {
		return rs
	}
	slices.SortFunc(rs, func(a, b Range) int { return cmp.Compare(a.Lo, b.Lo) })
	out := rs[:1]
	for _, r := range rs[1:] {
		last := &out[len(out)-1]
		if r.Lo <= last.Hi {
			last.Hi = max(last.Hi, r.Hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

// Boundary is the first address above a where membership in the sorted,
// disjoint rs changes, and whether rs holds a.
func Boundary(rs []Range, a uint64) (uint64, bool) {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Hi > a })
	switch {
	case i == len(rs):
		return ^uint64(0), false
	case rs[i].Lo <= a:
		return rs[i].Hi, true
	}
	return rs[i].Lo, false
}
