//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package debuginfod

import "time"

// lockDir is a no-op without flock(2): parallel processes may each
// fetch a file, which the rename into place keeps safe.
func lockDir(string, time.Duration) (unlock func()) { return func() {} }
