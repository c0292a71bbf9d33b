//go:build !linux

package hugeheap

// Advise does nothing but on Linux; it reports false.
func Advise() bool { return false }
