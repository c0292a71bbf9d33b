package cfg

// Per-address tables of one Build. Nearly every address a walk asks about
// lies in the procedure's own extent, where a slice by offset answers
// without hashing; decoding a sampled procedure of cc1plus spent more in
// map look-ups and growth than in the decoder. Addresses beyond the extent
// (a .cold part, code fallen into) go to a map.

import "slices"

// instIndex maps an instruction's address to its index in builder.all.
type instIndex struct {
	lo  uint64
	own []int32 // by offset from lo: index+1, 0 for none
	far map[uint64]int32
}

func newInstIndex(lo, hi uint64) instIndex {
	return instIndex{lo: lo, own: make([]int32, hi-lo), far: map[uint64]int32{}}
}

func (x *instIndex) get(a uint64) (int32, bool) {
	if a-x.lo < uint64(len(x.own)) {
		i := x.own[a-x.lo]
		return i - 1, i != 0
	}
	i, ok := x.far[a]
	return i, ok
}

func (x *instIndex) set(a uint64, i int32) {
	if a-x.lo < uint64(len(x.own)) {
		x.own[a-x.lo] = i + 1
		return
	}
	x.far[a] = i
}

// order lists the indices of the n instructions in address order: those
// of the own extent by a scan of it, linear where a sort of the addresses
// was not, and the few beyond it sorted around them.
func (x *instIndex) order(n int) []int32 {
	far := make([]uint64, 0, len(x.far))
	for a := range x.far {
		far = append(far, a)
	}
	slices.Sort(far)
	order := make([]int32, 0, n)
	k := 0
	for ; k < len(far) && far[k] < x.lo; k++ {
		order = append(order, x.far[far[k]])
	}
	for _, i := range x.own {
		if i != 0 {
			order = append(order, i-1)
		}
	}
	for ; k < len(far); k++ {
		order = append(order, x.far[far[k]])
	}
	return order
}

// addrSet is a set of addresses (the block leaders).
type addrSet struct {
	lo  uint64
	own bitset // by offset from lo
	far map[uint64]bool
}

func newAddrSet(lo, hi uint64) addrSet {
	return addrSet{lo: lo, own: make(bitset, (hi-lo+63)/64), far: map[uint64]bool{}}
}

func (s *addrSet) has(a uint64) bool {
	if o := a - s.lo; o/64 < uint64(len(s.own)) {
		return s.own.has(o)
	}
	return s.far[a]
}

func (s *addrSet) add(a uint64) {
	if o := a - s.lo; o/64 < uint64(len(s.own)) {
		s.own[o/64] |= 1 << (o % 64)
		return
	}
	s.far[a] = true
}
