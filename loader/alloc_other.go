//go:build !linux

package loader

func allocSection(n int) []byte { return make([]byte, n) }
