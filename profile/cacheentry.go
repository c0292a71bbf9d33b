package profile

import (
	"io"

	"bloop/cache"
	"bloop/internal/mapfile"
)

// The report's own cache entries (scope indexes, measurement structures,
// unwinding memos) are read and written by these two: a missing or
// unreadable entry is nil, a failed write only costs the next report the
// work.

// readEntry reads a cache entry; nil when there is none.
func readEntry(c *cache.Cache, key string) []byte { return entry(c, key, false) }

// mapEntry is a cache entry mapped, not read: what is used of it is read
// from the page cache as it is touched, and it stays mapped until the
// process ends (the entry's file is replaced, not written over, so the
// bytes do not change). It is read where it cannot be mapped; nil when
// there is none.
func mapEntry(c *cache.Cache, key string) []byte { return entry(c, key, true) }

func entry(c *cache.Cache, key string, mapped bool) []byte {
	if key == "" {
		return nil
	}
	f := c.Get(key)
	if f == nil {
		return nil
	}
	defer f.Close()
	// Read at its size: io.ReadAll's growing buffer copied a 3 MB entry
	// over and over (23 ms of a warm report).
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	if mapped {
		if b := mapfile.Map(f, st.Size(), false); b != nil {
			return b
		}
	}
	b := make([]byte, st.Size())
	if _, err := io.ReadFull(f, b); err != nil {
		return nil
	}
	return b
}

// writeEntry stores b, recording the files it depends on.
func writeEntry(c *cache.Cache, key string, b []byte, deps ...string) {
	storeEntry(c, key, b, (*cache.Entry).Commit, deps)
}

// writeLocalEntry stores b in the local directory only: what only this
// machine can use is not sent to a remote tier.
func writeLocalEntry(c *cache.Cache, key string, b []byte) {
	storeEntry(c, key, b, (*cache.Entry).CommitLocal, nil)
}

func storeEntry(c *cache.Cache, key string, b []byte, commit func(*cache.Entry) error, deps []string) {
	if key == "" {
		return
	}
	e, err := c.Create(key)
	if err != nil {
		return
	}
	if _, err := e.Write(b); err != nil {
		e.Abort()
		return
	}
	for _, d := range deps {
		e.DependsOn(d)
	}
	if commit(e) != nil {
		e.Abort()
	}
}
