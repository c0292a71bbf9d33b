// Package cache stores finished output files under a key computed from
// everything that decides their content, so that a second analysis of the
// same binary with the same options is a file copy. Entries are written to
// a temporary file and renamed into place: a concurrent reader sees a
// whole entry or none.
//
// An entry may also depend on files found only during the computation
// (sources read by the hybrid mode); those are listed in the entry with
// their content hash, or as absent, and a lookup whose list no longer
// holds is a miss. An entry may carry notes, a small blob the caller
// reads back with a hit.
//
// Behind the directory there may be a remote tier, an HTTP server
// (remote.go): Lookup asks it after a local miss and stores what it
// fetches locally; Commit uploads the entry.
package cache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"time"

	"bloop/atomicfile"
)

// layout names the directory of this entry format inside the cache root,
// so that another tool's (or an older bloop's) files are never read.
const layout = "bloop-v1"

// EnvVar names the cache root when neither --cache nor --nocache is given;
// hpcstruct reads the same variable.
const EnvVar = "HPCTOOLKIT_HPCSTRUCT_CACHE"

// Cache is a directory of entries, with an optional remote tier.
type Cache struct {
	dir    string
	remote *remote // nil: local only
}

// Tiers a hit comes from.
const (
	TierLocal  = "local"
	TierRemote = "remote"
)

// Open returns the cache rooted at dir, creating it.
func Open(dir string) (*Cache, error) {
	d := filepath.Join(dir, layout)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return nil, fmt.Errorf("cache %s: %w", dir, err)
	}
	return &Cache{dir: d}, nil
}

// DefaultDir is $HPCTOOLKIT_HPCSTRUCT_CACHE, else bloop's directory in the
// user's cache directory (~/.cache/bloop); "" when there is neither.
func DefaultDir() string {
	if d := os.Getenv(EnvVar); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "bloop")
	}
	return ""
}

// Dir is where entries are stored.
func (c *Cache) Dir() string { return c.dir }

// Key hashes the parts that decide an entry's content.
func Key(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (c *Cache) paths(key string) (out, deps string) {
	base := filepath.Join(c.dir, key[:2], key)
	return base + "-o", base + "-d"
}

// notesPath holds the notes of key's entry.
func (c *Cache) notesPath(key string) string {
	return filepath.Join(c.dir, key[:2], key) + "-n"
}

// Hit is an entry found by Lookup: its content, open, and its notes.
type Hit struct {
	*os.File
	Notes []byte
	Tier  string // TierLocal or TierRemote
}

// Lookup finds the entry of key in the local directory, else on the
// remote server, whose entry is verified and stored locally first. It
// returns nil on a miss. The caller closes the hit.
func (c *Cache) Lookup(key string) *Hit {
	if f := c.Get(key); f != nil {
		notes, err := os.ReadFile(c.notesPath(key))
		if err == nil {
			return &Hit{File: f, Notes: notes, Tier: TierLocal}
		}
		f.Close()
	}
	return c.fetch(key)
}

// Get opens the entry of key in the local directory, or returns nil when
// there is none or a file it depends on changed. The caller closes the
// file.
func (c *Cache) Get(key string) *os.File {
	out, deps := c.paths(key)
	if !c.depsHold(deps) {
		return nil
	}
	f, err := os.Open(out)
	if err != nil {
		return nil
	}
	// The modification time records use, for Trim; refreshing it once an
	// hour keeps hits from writing to the disk each time.
	if st, err := f.Stat(); err == nil && time.Since(st.ModTime()) > time.Hour {
		now := time.Now()
		os.Chtimes(out, now, now)
	}
	return f
}

// depsHold reports whether every file the entry lists still has the
// recorded content, and every file recorded absent is still absent.
func (c *Cache) depsHold(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && c.depsText(string(b))
}

// depsText is depsHold of a list's text: lines of "<hash or -> <name>".
func (c *Cache) depsText(list string) bool {
	for _, l := range splitLines(list) {
		sum, name, ok := strings.Cut(l, " ")
		if !ok || c.depSum(name) != sum {
			return false
		}
	}
	return true
}

// Entry is an entry being written.
type Entry struct {
	c     *Cache
	key   string
	tmp   *os.File
	deps  []string
	notes []byte
	hash  hash.Hash // of the content
	size  int64
}

// Create starts writing the entry of key.
func (c *Cache) Create(key string) (*Entry, error) {
	out, _ := c.paths(key)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, fmt.Errorf("cache %s: %w", c.dir, err)
	}
	tmp, err := atomicfile.CreateTemp(filepath.Dir(out), ".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("cache %s: %w", c.dir, err)
	}
	return &Entry{c: c, key: key, tmp: tmp, hash: sha256.New()}, nil
}

// Write appends to the entry's content.
func (e *Entry) Write(p []byte) (int, error) {
	n, err := e.tmp.Write(p)
	e.hash.Write(p[:n])
	e.size += int64(n)
	return n, err
}

// SetNotes stores notes with the entry, for Lookup's hit.
func (e *Entry) SetNotes(b []byte) { e.notes = b }

// DependsOn records that the content depends on the file name: on its
// content when it is a readable file, on its absence (or being a
// directory, or unreadable) when it is not.
func (e *Entry) DependsOn(name string) {
	e.deps = append(e.deps, e.c.depSum(name)+" "+name)
}

// depSum is a dependency's content hash, "-" when it is not a readable
// regular file.
func (c *Cache) depSum(name string) string {
	if h, err := c.FileHash(name); err == nil {
		return h
	}
	return "-"
}

// Commit makes the entry visible, then uploads it when there is a
// remote tier that takes uploads. Its dependency list and notes are
// renamed into place first, so that a reader never pairs new content
// with no list. A failed upload is not an error: the entry is stored.
func (e *Entry) Commit() error { return e.commit(true) }

// CommitLocal makes the entry visible in the local directory only: for
// entries of this machine alone (its running kernel's symbols).
func (e *Entry) CommitLocal() error { return e.commit(false) }

func (e *Entry) commit(upload bool) error {
	out, deps := e.c.paths(e.key)
	defer func() {
		os.Remove(e.tmp.Name())
		atomicfile.Done(e.tmp.Name())
	}()
	if err := e.tmp.Close(); err != nil {
		return fmt.Errorf("cache %s: %w", e.c.dir, err)
	}
	var list strings.Builder
	for _, d := range e.deps {
		list.WriteString(d + "\n")
	}
	if err := atomicfile.WriteFile(deps, []byte(list.String())); err != nil {
		return fmt.Errorf("cache %s: %w", e.c.dir, err)
	}
	if err := atomicfile.WriteFile(e.c.notesPath(e.key), e.notes); err != nil {
		return fmt.Errorf("cache %s: %w", e.c.dir, err)
	}
	if err := os.Chmod(e.tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("cache %s: %w", e.c.dir, err)
	}
	if err := os.Rename(e.tmp.Name(), out); err != nil {
		return fmt.Errorf("cache %s: %w", e.c.dir, err)
	}
	e.c.maybeTrim()
	if upload {
		ref := blobRef{Name: blobOut, Hash: hex.EncodeToString(e.hash.Sum(nil)), Size: e.size}
		e.c.upload(e.key, out, ref, e.notes, []byte(list.String()))
	}
	return nil
}

// Abort drops the entry.
func (e *Entry) Abort() {
	e.tmp.Close()
	os.Remove(e.tmp.Name())
	atomicfile.Done(e.tmp.Name())
}
