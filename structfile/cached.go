package structfile

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"bloop/cache"
	"bloop/loader"
)

// formatVersion changes whenever the key's parts or the entry layout do.
const formatVersion = "bloop structure file 2" // 2: notes beside the file

// ModulePath is the LM path of bin: absolute, links resolved.
func ModulePath(bin string) string {
	p := bin
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p
}

// Key is the cache key of bin's structure file under opt: the content of
// the binary, of its separate debug file and of bloop itself, and every
// option that changes the output. The thread count is not one: output is
// the same bytes whatever it is.
func Key(c *cache.Cache, bin string, opt Options) (string, error) {
	self, err := selfHash(c)
	if err != nil {
		return "", err
	}
	sum, err := c.FileHash(bin)
	if err != nil {
		return "", err
	}
	dbg, dbgSum := "", ""
	if p, err := loader.DebugFileOf(bin, opt.Load.DebugDirs); err == nil && p != "" {
		if dbgSum, err = c.FileHash(p); err != nil {
			return "", err
		}
		dbg = ModulePath(p)
	}
	mod := opt.ModulePath
	if mod == "" {
		mod = ModulePath(bin)
	}
	po := opt.Pipeline
	norm := "default"
	if po.Normalize != nil {
		norm = fmt.Sprint(*po.Normalize)
	}
	var repl []string
	for _, r := range opt.Replace {
		repl = append(repl, r.Old+"="+r.New)
	}
	return cache.Key(formatVersion, self, sum, dbg, dbgSum, mod,
		fmt.Sprintf("json=%v pretty=%v engine=%v normalize=%s compat=%v", opt.JSON, opt.Pretty, po.Engine, norm, po.Compat),
		"sources="+strings.Join(po.SourceDirs, "\x00"),
		"debugdirs="+strings.Join(opt.Load.DebugDirs, "\x00"),
		"replace="+strings.Join(repl, "\x00")), nil
}

var (
	selfOnce sync.Once
	selfSum  string
	selfErr  error
)

// selfHash identifies this build of bloop by its executable's content:
// version stamps do not change with uncommitted edits, and an entry
// written by another build may differ.
func selfHash(c *cache.Cache) (string, error) {
	selfOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			selfErr = fmt.Errorf("cannot identify bloop's executable: %w", err)
			return
		}
		selfSum, selfErr = c.FileHash(exe)
	})
	return selfSum, selfErr
}

// Cached writes bin's structure file to w from the cache when it holds
// it, else analyses bin and stores the file. With a nil cache it is Write.
func Cached(c *cache.Cache, bin string, opt Options, w io.Writer) (*Result, error) {
	if c == nil {
		return Write(bin, opt, w)
	}
	if opt.ModulePath == "" {
		opt.ModulePath = ModulePath(bin)
	}
	key, err := Key(c, bin, opt)
	if err != nil {
		// Unreadable binary: Write gives the error every run gives.
		return Write(bin, opt, w)
	}
	if f := c.Get(key); f != nil {
		defer f.Close()
		if _, err := io.Copy(w, f); err != nil {
			return nil, fmt.Errorf("copying %s from the cache: %w", bin, err)
		}
		r := &Result{Cached: true, CacheTier: "local"}
		readNotes(c, key, r)
		return r, nil
	}
	e, err := c.Create(key)
	if err != nil {
		return Write(bin, opt, w)
	}
	finder := sourceFinder(&opt)
	r, err := Write(bin, opt, io.MultiWriter(w, e))
	if err != nil {
		e.Abort()
		return r, err
	}
	probed := finder.Probed()
	for _, p := range probed {
		e.DependsOn(p)
	}
	// The notes first: a reader never finds the file without them.
	writeNotes(c, key, r, probed)
	// A failure to store is not the run's failure: the output is written.
	if err := e.Commit(); err != nil {
		e.Abort()
	}
	return r, nil
}

// notes are a cached file's Result fields that say something of the
// input; they are stored beside it only when there is something to say.
type notes struct {
	Warnings []string            `json:"warnings,omitempty"`
	Corrupt  []loader.Corruption `json:"corrupt,omitempty"`
}

func notesKey(key string) string { return cache.Key(key, "notes") }

func writeNotes(c *cache.Cache, key string, r *Result, deps []string) {
	if len(r.Warnings) == 0 && len(r.Corrupt) == 0 {
		return
	}
	b, err := json.Marshal(notes{r.Warnings, r.Corrupt})
	if err != nil {
		return
	}
	e, err := c.Create(notesKey(key))
	if err != nil {
		return
	}
	for _, p := range deps {
		e.DependsOn(p)
	}
	if _, err := e.Write(b); err != nil || e.Commit() != nil {
		e.Abort()
	}
}

// readNotes fills r's notes from the cache; a missing or damaged entry
// leaves them empty.
func readNotes(c *cache.Cache, key string, r *Result) {
	f := c.Get(notesKey(key))
	if f == nil {
		return
	}
	defer f.Close()
	var n notes
	if json.NewDecoder(f).Decode(&n) == nil {
		r.Warnings, r.Corrupt = n.Warnings, n.Corrupt
	}
}
