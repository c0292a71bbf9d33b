package loader

import (
	"os"
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

// mapFile maps a file's bytes (copy-on-write: nothing written reaches
// the file), nil when it cannot. The mapping is never unmapped: the
// sections sliced from it live as long as whatever holds them.
func mapFile(f *os.File, size int64) []byte {
	if size <= 0 || int64(int(size)) != size {
		return nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return b
}
