// Package fuzzing holds what bloop's fuzz targets share: a watchdog that
// turns a hang into a failure showing where it hangs (the fuzzing engine
// has no per-input time limit and would only report that its worker
// stopped answering), and the writing of an input to a file.
package fuzzing

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/pprof"
	"testing"
	"time"
)

// Watchdog panics with every goroutine's stack if the returned stop is not
// called within d; what names the operation in the message.
func Watchdog(what string, d time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(d):
			var buf bytes.Buffer
			pprof.Lookup("goroutine").WriteTo(&buf, 2)
			panic(what + " hangs (over " + d.String() + "):\n" + buf.String())
		}
	}()
	return func() { close(done) }
}

// WriteInput writes an input to dir/name for the targets that read
// files, and returns the path. The old file is removed first: truncating
// a file that holds data makes ext4 flush it on close, which stalls every
// execution on the disk.
func WriteInput(t testing.TB, dir, name string, b []byte) string {
	path := filepath.Join(dir, name)
	os.Remove(path)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
