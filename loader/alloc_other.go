//go:build !linux

package loader

import "os"

func allocBytes(n int) []byte { return make([]byte, n) }

func mapFile(*os.File, int64) []byte { return nil }
