package profile

import (
	"os"
	"unsafe"
)

// pageSize is the size of the memory pages makeTouched writes to.
var pageSize = os.Getpagesize()

// makeTouched makes a slice of n zero elements and writes to each of its
// pages. A new page that is read before it is written (a hash table's
// probes, a sum's +=, the collector scanning an array of pointers) maps
// the kernel's zero page, and the first write then copies it and makes
// every other core running the process drop it from its TLB, an
// interrupt each: in a frame-pointer report of g++ that was a tenth of
// the CPU time, the children's tables of the tree of stacks most of it.
func makeTouched[T any](n int) []T {
	s := make([]T, n)
	var zero T
	size := int(unsafe.Sizeof(zero))
	if size == 0 || n*size < 16*pageSize {
		return s // small: from spans in use, whose pages are mapped
	}
	for i := 0; i < n; i += max(1, pageSize/size) {
		s[i] = zero
	}
	return s
}
