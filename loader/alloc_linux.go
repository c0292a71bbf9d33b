package loader

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// allocSection allocates a section's bytes. Large ones ask for transparent
// huge pages (where the system gives them on request): libjvm's DWARF
// alone is 300 MB, and touching it 4 KB at a time cost a page fault each.
func allocSection(n int) []byte {
	b := make([]byte, n)
	if n >= 8<<20 {
		const huge = 2 << 20
		// Only whole huge pages inside the buffer.
		lo := (huge - int(uintptrOf(b))%huge) % huge
		if hi := lo + (n-lo)/huge*huge; hi > lo {
			_ = unix.Madvise(b[lo:hi], unix.MADV_HUGEPAGE)
		}
	}
	return b
}

func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
