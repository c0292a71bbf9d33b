// Package atomicfile keeps track of the temporary files bloop writes
// before renaming them into place, so that an interrupted run (Ctrl-C,
// timeout's SIGTERM) removes them instead of leaving .NAME.tmpNNNN files,
// and finds where a destination that is a symbolic link really points.
package atomicfile

import (
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
)

var (
	mu       sync.Mutex
	live     = map[string]bool{}
	handling sync.Once
)

// CreateTemp creates a temporary file in dir (os.CreateTemp's pattern)
// that is removed if the process is interrupted before Done.
func CreateTemp(dir, pattern string) (*os.File, error) {
	mu.Lock()
	defer mu.Unlock()
	f, err := os.CreateTemp(dir, pattern)
	if err == nil {
		live[f.Name()] = true
	}
	return f, err
}

// Done forgets a temporary file: it was renamed into place or removed.
func Done(name string) {
	mu.Lock()
	delete(live, name)
	mu.Unlock()
}

// removeAll removes every temporary file still in flight.
func removeAll() {
	mu.Lock()
	defer mu.Unlock()
	for name := range live {
		os.Remove(name)
		delete(live, name)
	}
}

// HandleSignals makes SIGINT, SIGTERM and SIGHUP remove the temporary
// files and end the process with the conventional status, 128 plus the
// signal's number. Calls after the first do nothing.
func HandleSignals() { handling.Do(handleSignals) }

func handleSignals() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		sig := <-ch
		removeAll()
		n := 1
		if s, ok := sig.(syscall.Signal); ok {
			n = int(s)
		}
		os.Exit(128 + n)
	}()
}

// maxLinks bounds a chain of symbolic links, as the kernel does (ELOOP).
const maxLinks = 40

// Target follows dest's symbolic links, also to a target that does not
// exist yet, and returns the file a write to dest should replace.
func Target(dest string) string {
	cur := dest
	for i := 0; i < maxLinks; i++ {
		st, err := os.Lstat(cur)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			return cur
		}
		link, err := os.Readlink(cur)
		if err != nil {
			return cur
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(cur), link)
		}
		cur = link
	}
	return cur
}
