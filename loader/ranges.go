package loader

import (
	"cmp"
	"slices"
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
