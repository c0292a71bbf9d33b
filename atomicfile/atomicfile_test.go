package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestTarget(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.WriteFile(real, nil, 0o644)
	os.Symlink("real", filepath.Join(dir, "a"))                  // relative
	os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "b")) // absolute, to a link
	os.Symlink("missing", filepath.Join(dir, "dangling"))
	os.Symlink("loop2", filepath.Join(dir, "loop1"))
	os.Symlink("loop1", filepath.Join(dir, "loop2"))
	for _, c := range []struct{ in, want string }{
		{real, real},
		{filepath.Join(dir, "a"), real},
		{filepath.Join(dir, "b"), real},
		{filepath.Join(dir, "dangling"), filepath.Join(dir, "missing")},
		{filepath.Join(dir, "none"), filepath.Join(dir, "none")},
	} {
		if got := Target(c.in); got != c.want {
			t.Errorf("Target(%s) = %s, want %s", c.in, got, c.want)
		}
	}
	Target(filepath.Join(dir, "loop1")) // ends: the chain is bounded
}

// TestWriteFailureLeavesNothing: a failed write leaves neither the
// destination nor a temporary file, and forgets the temporary.
func TestWriteFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "out")
	boom := errors.New("boom")
	if err := Write(dest, func(w io.Writer) error { io.WriteString(w, "half"); return boom }); !errors.Is(err, boom) {
		t.Fatalf("error %v, want the write's", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left %v", ents)
	}
	if len(live) != 0 {
		t.Errorf("temporaries still tracked: %v", live)
	}
	if err := WriteFile(dest, []byte("whole")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dest); string(b) != "whole" {
		t.Errorf("got %q", b)
	}
	if err := WriteFile(os.DevNull, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&os.ModeDevice == 0 {
		t.Fatal("the device was replaced")
	}
}

// TestNoTemporaryAfterSignal: once a signal has removed the temporary
// files, a writer still running cannot leave a new one behind before the
// process exits.
func TestNoTemporaryAfterSignal(t *testing.T) {
	dir := t.TempDir()
	tmp, err := CreateTemp(dir, ".a.tmp*")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	removeAll()
	t.Cleanup(func() { mu.Lock(); stopping = false; mu.Unlock() })
	if err := WriteFile(filepath.Join(dir, "b"), []byte("x")); err == nil {
		t.Error("a write after the signal succeeded")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left %v", ents)
	}
}
