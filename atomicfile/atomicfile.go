// Package atomicfile writes files under a temporary name and renames them
// into place, and keeps track of those temporary files so that an
// interrupted run (Ctrl-C, timeout's SIGTERM) removes them instead of
// leaving .NAME.tmpNNNN files. A destination that is a symbolic link is
// written where it points.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
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
	// stopping is set once the temporary files are removed on a signal:
	// a writer still running must not create another before the process
	// exits (a task cancelled by Slurm left one so).
	stopping bool
)

// errStopping is CreateTemp's error once the process is being ended.
var errStopping = errors.New("interrupted: the process is ending")

// CreateTemp creates a temporary file in dir (os.CreateTemp's pattern)
// that is removed if the process is interrupted before Done.
func CreateTemp(dir, pattern string) (*os.File, error) {
	mu.Lock()
	defer mu.Unlock()
	if stopping {
		return nil, errStopping
	}
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

// removeAll removes every temporary file still in flight, and any
// created later is refused.
func removeAll() {
	mu.Lock()
	defer mu.Unlock()
	stopping = true
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

// Replace renames the finished temporary file tmp to dest. Renamed over
// an existing file, ext4 (auto_da_alloc) writes the new one back to disk
// inside rename (8-15 ms for 32 MB); removing the old one first avoids
// that. A reader may then briefly find no file, never a partial one.
func Replace(tmp, dest string) error {
	defer Done(tmp)
	os.Remove(dest)
	return os.Rename(tmp, dest)
}

// Write writes dest through write: to a temporary file beside the file
// dest names (through symbolic links), renamed into place when write
// succeeds, so a failed run never leaves a partial file that looks
// complete. A device or pipe (/dev/null, a FIFO) is written in place:
// renaming over it would replace it with a file.
func Write(dest string, write func(io.Writer) error) error {
	if st, err := os.Stat(dest); err == nil && !st.Mode().IsRegular() {
		f, err := os.OpenFile(dest, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("cannot write %s: %v", dest, err)
		}
		if err := write(f); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %v", dest, err)
		}
		return f.Close()
	}
	dest = Target(dest)
	tmp, err := CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", dest, err)
	}
	defer func() {
		os.Remove(tmp.Name())
		Done(tmp.Name())
	}()
	// write's own errors name their file (the binary, or the temporary
	// file on a full disk).
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %v", dest, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := Replace(tmp.Name(), dest); err != nil {
		return fmt.Errorf("cannot write %s: %v", dest, err)
	}
	return nil
}

// WriteFile is Write of data.
func WriteFile(dest string, data []byte) error {
	return Write(dest, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
