package perfevent

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps a perf.data file's bytes read-only, nil when it cannot
// (then the records are read through a buffer). A private mapping of a
// file: pages given back (dropPages) are read again from the page cache
// when touched again, so dropping them never changes what is read.
func mapFile(fh *os.File, size int64) []byte {
	if size <= 0 || int64(int(size)) != size {
		return nil
	}
	b, err := unix.Mmap(int(fh.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	_ = unix.Madvise(b, unix.MADV_SEQUENTIAL)
	return b
}

func unmapFile(b []byte) { _ = unix.Munmap(b) }

// dropPages gives the pages of b back: a report reads a file of
// gigabytes once, front to back, and must not hold it all.
func dropPages(b []byte) { _ = unix.Madvise(b, unix.MADV_DONTNEED) }
