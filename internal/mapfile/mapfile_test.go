package mapfile

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestMap: the mapping holds the file's bytes, a write to it does not
// reach the file, and dropped pages read the same again.
func TestMap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("maps files on Linux only")
	}
	want := bytes.Repeat([]byte("bloop mapped "), 4096)
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := Map(f, int64(len(want)), true)
	if !bytes.Equal(b, want) {
		t.Fatalf("mapped %d bytes, not the file's %d", len(b), len(want))
	}
	Drop(b[:8192])
	if !bytes.Equal(b, want) {
		t.Error("dropped pages read otherwise")
	}
	b[0] = 'X'
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Error("a write to the mapping reached the file")
	}
	Unmap(b)
	if Map(f, 0, false) != nil {
		t.Error("an empty file mapped")
	}
}
