package profile

import (
	"bytes"
	"debug/elf"
	"path/filepath"
	"testing"

	"bloop/loader"
)

// TestPrefetch: a module opened ahead is taken when it was opened for
// the build-id recorded, else opened again; the vdso and modules of a
// stored image are not opened ahead, and a module is opened ahead once.
func TestPrefetch(t *testing.T) {
	path, err := filepath.Abs("../testdata/prof/bin/unwind-gcc12-O2")
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	id := loader.BuildID(f)
	f.Close()
	if len(id) == 0 {
		t.Fatalf("%s has no build-id", path)
	}
	other := bytes.Repeat([]byte{0xab}, len(id))

	s := newSpace(loader.Options{})
	s.blobs["/stored/image.so"] = []byte("\x7fELF")
	s.prefetch(path, map[string][]byte{path: id})
	s.prefetch(path, map[string][]byte{path: other}) // already ahead: not again
	s.prefetch("[vdso]", nil)
	s.prefetch("/stored/image.so", nil)
	if len(s.ahead) != 1 || s.ahead[path] == nil {
		t.Fatalf("opened ahead: %v, want %s alone", s.ahead, path)
	}
	s.endPrefetch()
	m, warn := s.prefetched(path, id, true)
	if m == nil || m.Err != nil || !bytes.Equal(m.BuildID, id) || warn != "" {
		t.Fatalf("prefetched for its build-id: %+v, warning %q", m, warn)
	}
	if again, _ := s.prefetched(path, id, true); again != nil {
		t.Error("a module opened ahead was taken twice")
	}

	// Opened ahead for another build-id (perf's header named another
	// than the MMAP2 record): not taken, module opens it again.
	s = newSpace(loader.Options{})
	s.prefetch(path, map[string][]byte{path: other})
	s.endPrefetch()
	s.buildIDs[path] = id
	if m, _ := s.prefetched(path, id, true); m != nil {
		t.Error("a module opened ahead for another build-id was taken")
	}
	s.prefetch(path, map[string][]byte{path: id})
	s.endPrefetch()
	if m := s.module(path); m.Err != nil || !bytes.Equal(m.BuildID, id) {
		t.Errorf("module: %+v", m)
	}
	if len(s.ahead) != 0 {
		t.Errorf("left ahead: %v", s.ahead)
	}
}
