package cache

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func put(t *testing.T, c *Cache, key, content string, deps ...string) {
	t.Helper()
	e, err := c.Create(key)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(e, content)
	for _, d := range deps {
		e.DependsOn(d)
	}
	if err := e.Commit(); err != nil {
		t.Fatal(err)
	}
}

func get(c *Cache, key string) (string, bool) {
	f := c.Get(key)
	if f == nil {
		return "", false
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	return string(b), true
}

func TestGetPut(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	k := Key("a", "b")
	if _, ok := get(c, k); ok {
		t.Fatal("hit in an empty cache")
	}
	put(t, c, k, "content")
	if got, ok := get(c, k); !ok || got != "content" {
		t.Fatalf("got %q %v", got, ok)
	}
	// Key parts are length-prefixed: moving a boundary changes the key.
	if Key("ab", "") == Key("a", "b") || Key("a", "b") != k {
		t.Error("keys of different parts collide, or one key is unstable")
	}
	// An aborted entry is never seen.
	e, _ := c.Create(Key("aborted"))
	io.WriteString(e, "half")
	e.Abort()
	if _, ok := get(c, Key("aborted")); ok {
		t.Error("an aborted entry is visible")
	}
}

// TestDependencies checks that an entry is a miss once a file it depends
// on changes, or a file recorded absent appears.
func TestDependencies(t *testing.T) {
	dir := t.TempDir()
	c, _ := Open(filepath.Join(dir, "cache"))
	src := filepath.Join(dir, "x.c")
	absent := filepath.Join(dir, "y.c")
	os.WriteFile(src, []byte("int x;"), 0o644)
	k := Key("with deps")
	put(t, c, k, "out", src, absent)
	if _, ok := get(c, k); !ok {
		t.Fatal("miss with unchanged dependencies")
	}
	// Same size, same second: the change time and the hash still tell.
	os.WriteFile(src, []byte("int y;"), 0o644)
	if _, ok := get(c, k); ok {
		t.Error("hit after a dependency changed")
	}
	os.WriteFile(src, []byte("int x;"), 0o644)
	if _, ok := get(c, k); !ok {
		t.Error("miss after the dependency got its content back")
	}
	os.WriteFile(absent, nil, 0o644)
	if _, ok := get(c, k); ok {
		t.Error("hit after a file recorded absent appeared")
	}
}

// TestFileHashMemo checks that the remembered hash follows the content.
func TestFileHashMemo(t *testing.T) {
	dir := t.TempDir()
	c, _ := Open(filepath.Join(dir, "cache"))
	f := filepath.Join(dir, "bin")
	os.WriteFile(f, []byte("one"), 0o644)
	h1, err := c.FileHash(f)
	if err != nil {
		t.Fatal(err)
	}
	h1b, _ := c.FileHash(f)
	os.WriteFile(f, []byte("two"), 0o644)
	h2, _ := c.FileHash(f)
	want, _ := hashFile(f)
	if h1 != h1b || h1 == h2 || h2 != want {
		t.Errorf("hashes %s %s %s, want the second %s", h1, h1b, h2, want)
	}
	if _, err := c.FileHash(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}

// TestConcurrentWriters checks that racing writers and readers of one key
// only ever see a whole entry.
func TestConcurrentWriters(t *testing.T) {
	c, _ := Open(t.TempDir())
	k := Key("race")
	content := string(make([]byte, 1<<20))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			put(t, c, k, content)
		}()
		go func() {
			defer wg.Done()
			if got, ok := get(c, k); ok && got != content {
				t.Errorf("read a partial entry of %d bytes", len(got))
			}
		}()
	}
	wg.Wait()
	ents, _ := os.ReadDir(filepath.Join(c.Dir(), k[:2]))
	for _, e := range ents {
		if filepath.Ext(e.Name()) == "" && e.Name()[0] == '.' {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestTrim(t *testing.T) {
	c, _ := Open(t.TempDir())
	old, fresh := Key("old"), Key("fresh")
	put(t, c, old, "o")
	put(t, c, fresh, "f")
	out, deps := c.paths(old)
	past := time.Now().Add(-30 * 24 * time.Hour)
	os.Chtimes(out, past, past)
	os.Chtimes(deps, past, past)
	c.Trim(time.Now().Add(-maxAge))
	if _, ok := get(c, old); ok {
		t.Error("an entry unused for 30 days survived")
	}
	if _, ok := get(c, fresh); !ok {
		t.Error("a fresh entry was trimmed")
	}
	if _, err := os.Stat(deps); err == nil {
		t.Error("the trimmed entry's dependency list is left")
	}
}
