package loader

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on x86-64 and arm64.
const hugePage = 2 << 20

// allocBytes allocates n bytes. Large buffers ask for transparent huge
// pages (where the system gives them on request): each first touch of a
// 4 KB page is a fault, and loading libjvm touched 1.3 GB.
func allocBytes(n int) []byte {
	b := make([]byte, n)
	if n >= 2*hugePage {
		// Only whole huge pages inside the buffer.
		lo := (hugePage - int(uintptr(unsafe.Pointer(unsafe.SliceData(b))))%hugePage) % hugePage
		if hi := lo + (n-lo)/hugePage*hugePage; hi > lo {
			_ = unix.Madvise(b[lo:hi], unix.MADV_HUGEPAGE)
		}
	}
	return b
}
