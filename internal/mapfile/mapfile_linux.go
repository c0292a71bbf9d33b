// Package mapfile maps files into memory, for the readers that touch few
// of a large file's bytes (a report's modules) or read it once, front
// to back (a perf.data file).
package mapfile

import (
	"os"

	"golang.org/x/sys/unix"
)

// Map maps f's size bytes private and copy-on-write (nothing written
// reaches the file), nil when it cannot (then read the file instead).
// Pages given back (Drop) are read again from the page cache when
// touched again, so dropping them never changes what is read.
// sequential asks the kernel to read ahead for a front-to-back reading.
func Map(f *os.File, size int64, sequential bool) []byte {
	if size <= 0 || int64(int(size)) != size {
		return nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	if sequential {
		_ = unix.Madvise(b, unix.MADV_SEQUENTIAL)
	}
	return b
}

// Unmap ends a mapping Map made.
func Unmap(b []byte) { _ = unix.Munmap(b) }

// Drop gives the pages of b back: a file of gigabytes read once must not
// stay resident.
func Drop(b []byte) { _ = unix.Madvise(b, unix.MADV_DONTNEED) }
