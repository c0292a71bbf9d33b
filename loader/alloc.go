package loader

import "unsafe"

// allocRows allocates line rows, which hold no pointers, as bytes, so
// that a large table gets huge pages too.
func allocRows(n int) []lineRow {
	if n == 0 {
		return nil
	}
	size := int(unsafe.Sizeof(lineRow{}))
	b := allocBytes(n * size)
	return unsafe.Slice((*lineRow)(unsafe.Pointer(unsafe.SliceData(b))), n)[:0]
}
