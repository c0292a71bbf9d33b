//go:build !linux

// Package mapfile maps files into memory; elsewhere than on Linux it
// does not, and its readers read the files.
package mapfile

import "os"

// Map returns nil: read the file instead.
func Map(*os.File, int64, bool) []byte { return nil }

// Unmap does nothing.
func Unmap([]byte) {}

// Drop does nothing.
func Drop([]byte) {}
