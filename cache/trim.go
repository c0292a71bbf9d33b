package cache

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"bloop/atomicfile"
)

// Entries unused for maxAge are deleted, at most once per trimEvery, by
// the run that commits an entry; a hit refreshes its entry's time.
const (
	maxAge    = 7 * 24 * time.Hour
	trimEvery = 24 * time.Hour
)

// maybeTrim deletes old entries when the last trim is a day old. Errors
// are ignored: trimming only frees space.
func (c *Cache) maybeTrim() {
	stamp := filepath.Join(c.dir, "trim.txt")
	if b, err := os.ReadFile(stamp); err == nil {
		if t, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && time.Since(time.Unix(t, 0)) < trimEvery {
			return
		}
	}
	atomicfile.WriteFile(stamp, []byte(strconv.FormatInt(time.Now().Unix(), 10)+"\n"))
	c.Trim(time.Now().Add(-maxAge))
}

// Trim deletes the entries last used before cutoff, with their dependency
// lists and notes, hash memos not refreshed since then, and temporary files
// that old (left by a killed run).
func (c *Cache) Trim(cutoff time.Time) {
	filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			return nil
		}
		name := d.Name()
		switch {
		case strings.HasSuffix(name, "-o"):
			os.Remove(p)
			os.Remove(strings.TrimSuffix(p, "-o") + "-d")
			os.Remove(strings.TrimSuffix(p, "-o") + "-n")
		case strings.HasSuffix(name, "-d") || strings.HasSuffix(name, "-n"):
			// A list or notes whose content never came (a run killed
			// between the renames).
			if _, err := os.Stat(p[:len(p)-2] + "-o"); os.IsNotExist(err) {
				os.Remove(p)
			}
		case strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp"), filepath.Base(filepath.Dir(p)) == "hash":
			os.Remove(p)
		}
		return nil
	})
}
