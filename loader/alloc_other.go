//go:build !linux

package loader

func allocBytes(n int) []byte { return make([]byte, n) }
