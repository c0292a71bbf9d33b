package loader

import (
	"sort"

	"bloop/structure"
)

// Boundary is the first address above a where membership in the sorted,
// disjoint rs changes, and whether rs holds a.
func Boundary(rs []structure.Range, a uint64) (uint64, bool) {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Hi > a })
	switch {
	case i == len(rs):
		return ^uint64(0), false
	case rs[i].Lo <= a:
		return rs[i].Hi, true
	}
	return rs[i].Lo, false
}
