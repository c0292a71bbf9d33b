//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package debuginfod

import (
	"os"
	"syscall"
	"time"
)

// lockDir takes an exclusive flock(2) on a build-id's directory, so that
// parallel bloop processes sharing the cache fetch a file once: the
// others wait, then find it in the cache. No file is added to elfutils'
// layout. It is best effort: where the lock cannot be taken (a file
// system without flock) or is held longer than wait (a stopped
// process), this process fetches for itself, which the rename into
// place keeps safe.
func lockDir(dir string, wait time.Duration) (unlock func()) {
	f, err := os.Open(dir)
	if err != nil {
		return func() {}
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}
		}
		if err != syscall.EWOULDBLOCK || time.Now().After(deadline) {
			f.Close()
			return func() {}
		}
		time.Sleep(20 * time.Millisecond)
	}
}
