//go:build !linux

package perfevent

import "os"

func mapFile(*os.File, int64) []byte { return nil }

func unmapFile([]byte) {}

func dropPages([]byte) {}
