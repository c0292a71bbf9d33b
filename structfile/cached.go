package structfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"

	"bloop/cache"
	"bloop/loader"
	"bloop/structure"
)

// formatVersion changes whenever the key's parts or the entry layout do.
// 3: keys that machines share (no paths, bloop's revision), the module
// path as a placeholder, counts in the notes, notes in the entry.
const formatVersion = "bloop structure file 3"

// modulePlaceholder stands for the LM path in a stored structure file,
// so that one entry serves the binary wherever it lies: each hit puts
// the path of its own copy there. It is made of characters that neither
// XML nor JSON escaping changes.
const modulePlaceholder = "bloop-module-path-placeholder-7c2e95d1a4b0f836"

// maxHead bounds where the placeholder may be: the LM element and the
// JSON module's path come before any procedure.
const maxHead = 1 << 20

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

// Key is the cache key of bin's structure file under opt. Two machines
// agree on it: it is made of bloop's identity (selfID), the content of
// the binary and of its separate debug file, the binary's base name
// (procedure names carry it: `f [libgsl.so.27.0.0]`), and every option
// that changes the output. Paths are not in it (the module path is put
// in on each hit), nor the thread count, nor where the debug file was
// found.
func Key(c *cache.Cache, bin string, opt Options) (string, error) {
	k, err := keyOf(c, bin, opt)
	return k.key, err
}

// keyInfo is a key with the debug file found while making it.
type keyInfo struct {
	key     string
	dbg     string // the separate debug file, "" for none
	dbgFrom string // where it came from (loader.DebugLocal, loader.DebugDebuginfod)
}

func keyOf(c *cache.Cache, bin string, opt Options) (keyInfo, error) {
	var k keyInfo
	self, err := selfID(c)
	if err != nil {
		return k, err
	}
	sum, err := c.FileHash(bin)
	if err != nil {
		return k, err
	}
	// The debug file actually used, fetched ones included: a structure
	// made without debug info is not served once a debuginfod has it.
	dbgSum := ""
	if p, from, err := loader.DebugFileFor(bin, opt.Load); err == nil && p != "" {
		if dbgSum, err = c.FileHash(p); err != nil {
			return k, err
		}
		k.dbg, k.dbgFrom = p, from
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
	mode := fmt.Sprintf("json=%v pretty=%v engine=%v normalize=%s compat=%v", opt.JSON, opt.Pretty, po.Engine, norm, po.Dyninst != nil)
	if po.GPUCFG {
		mode += " gpucfg=true" // only when set: other keys stay what they were
	}
	if po.SourceFetcher != nil {
		// A structure made without fetching sources recorded only the
		// local paths it missed: it must not be served when a fetched
		// source would change it (nor the other way round).
		mode += " sourcefetch=true"
	}
	k.key = cache.Key(formatVersion, self, sum, dbgSum, filepath.Base(ModulePath(bin)), mode,
		"sources="+strings.Join(po.SourceDirs, "\x00"),
		"replace="+strings.Join(repl, "\x00"))
	return k, nil
}

var (
	selfOnce sync.Once
	selfSum  string
	selfErr  error
)

// selfID identifies this build of bloop: its module version and VCS
// revision when the go command stamped them from a clean checkout, which
// every machine running that build agrees on; else (a modified checkout,
// a go test binary, no stamp) the executable's content, since an entry
// written by another such build may differ.
func selfID(c *cache.Cache) (string, error) {
	selfOnce.Do(func() {
		if bi, ok := debug.ReadBuildInfo(); ok {
			if id := buildID(bi); id != "" {
				selfSum = id
				return
			}
		}
		exe, err := os.Executable()
		if err != nil {
			selfErr = fmt.Errorf("cannot identify bloop's executable: %w", err)
			return
		}
		if sum, err := c.FileHash(exe); err != nil {
			selfErr = fmt.Errorf("cannot identify bloop's executable: %w", err)
		} else {
			selfSum = "executable " + sum
		}
	})
	return selfSum, selfErr
}

// buildID is "<module> <version> <revision>" of a build stamped from an
// unmodified checkout, "" for any other build.
func buildID(bi *debug.BuildInfo) string {
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" || modified != "false" {
		return ""
	}
	return strings.Join([]string{bi.Main.Path, bi.Main.Version, rev}, " ")
}

// Cached writes bin's structure file to w from the cache when it holds
// it, else analyses bin and stores the file. With a nil cache it is Write.
func Cached(c *cache.Cache, bin string, opt Options, w io.Writer) (*Result, error) {
	if c == nil || opt.Writer != nil {
		return Write(bin, opt, w)
	}
	// bloop struct's inputs were checked from their headers (Run's
	// loader.Check) before this hashes them.
	if opt.ModulePath == "" {
		opt.ModulePath = ModulePath(bin)
	}
	k, err := keyOf(c, bin, opt)
	if err != nil {
		// Unreadable binary: Write gives the error every run gives.
		return Write(bin, opt, w)
	}
	rel := relocation{module: opt.ModulePath, json: opt.JSON, bin: bin, dbg: k.dbg, dbgFrom: k.dbgFrom}
	if h := c.Lookup(k.key); h != nil {
		r, err := fromHit(h, rel, w)
		h.Close()
		if !errors.Is(err, errDamaged) {
			if err != nil {
				return nil, fmt.Errorf("copying %s from the cache: %w", bin, err)
			}
			return r, nil
		}
		// A damaged entry: nothing was written; it is analysed again
		// and replaced.
	}
	e, err := c.Create(k.key)
	if err != nil {
		return Write(bin, opt, w)
	}
	finder := sourceFinder(&opt)
	// The stored file has the placeholder where the output has the path.
	stored := opt
	stored.ModulePath = modulePlaceholder
	out := rel.writer(w)
	sink := &bestEffort{w: e}
	r, err := Write(bin, stored, io.MultiWriter(out, sink))
	if err == nil {
		err = out.flush()
	}
	if err != nil {
		e.Abort()
		return r, err
	}
	if sink.err != nil {
		e.Abort()
		return r, nil
	}
	for _, p := range finder.Probed() {
		e.DependsOn(p)
	}
	b, err := json.Marshal(notesOf(r, rel))
	if err != nil {
		e.Abort()
		return r, nil
	}
	e.SetNotes(b)
	// A failure to store is not the run's failure: the output is written.
	if err := e.Commit(); err != nil {
		e.Abort()
	}
	return r, nil
}

// errDamaged is a stored entry that cannot be used: its notes do not
// read or its file has no placeholder. Nothing was written from it.
var errDamaged = errors.New("damaged cache entry")

// fromHit copies a stored file to w with the module path put in, and
// returns the Result its notes give.
func fromHit(h *cache.Hit, rel relocation, w io.Writer) (*Result, error) {
	var n notes
	if json.Unmarshal(h.Notes, &n) != nil || n.Format != formatVersion {
		return nil, errDamaged
	}
	out := rel.writer(w)
	_, err := io.Copy(out, h)
	if err == nil {
		err = out.flush()
	}
	if err != nil {
		if !out.wrote {
			return nil, errDamaged
		}
		return nil, err
	}
	r := n.result(rel)
	r.Cached, r.CacheTier = true, h.Tier
	return r, nil
}

// bestEffort writes to the cache entry without failing the output: an
// error is kept, and the entry dropped at the end.
type bestEffort struct {
	w   io.Writer
	err error
}

func (b *bestEffort) Write(p []byte) (int, error) {
	if b.err == nil {
		_, b.err = b.w.Write(p)
	}
	return len(p), nil
}

// relocation is what a stored entry leaves out of its input: the LM path
// written, the binary's name as given and its debug file's path (in the
// warnings).
type relocation struct {
	module   string
	json     bool
	bin, dbg string
	dbgFrom  string
}

// writer copies a structure file to w with the placeholder replaced by
// the module path, escaped as the format's writer escapes it.
func (rl relocation) writer(w io.Writer) *pathWriter {
	esc := structure.EscapeAttr(rl.module)
	if rl.json {
		esc = structure.EscapeJSON(rl.module)
	}
	return &pathWriter{w: w, old: []byte(modulePlaceholder), new: []byte(esc)}
}

// pathWriter holds its input back until it has found the placeholder's
// first occurrence (the LM's path), writes it with the replacement, and
// then passes everything through.
type pathWriter struct {
	w        io.Writer
	old, new []byte
	head     []byte
	found    bool
	wrote    bool // something was handed to w
}

var errNoPlaceholder = errors.New("no module path placeholder in the stored file's head")

func (p *pathWriter) Write(b []byte) (int, error) {
	if p.found {
		p.wrote = true
		return p.w.Write(b)
	}
	p.head = append(p.head, b...)
	i := bytes.Index(p.head, p.old)
	if i < 0 {
		if len(p.head) > maxHead {
			return 0, errNoPlaceholder
		}
		return len(b), nil
	}
	p.found = true
	out := make([]byte, 0, len(p.head)-len(p.old)+len(p.new))
	out = append(append(append(out, p.head[:i]...), p.new...), p.head[i+len(p.old):]...)
	p.head = nil
	p.wrote = true
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// flush ends the copy: a file without the placeholder is an error.
func (p *pathWriter) flush() error {
	if !p.found {
		return errNoPlaceholder
	}
	return nil
}

// notes are what a stored file's Result says of its input and of the
// tree written; a hit gives them back, so that a damaged binary is
// reported on every run and a build's manifest has its counts.
type notes struct {
	Format   string              `json:"format"`
	Warnings []string            `json:"warnings,omitempty"`
	Corrupt  []loader.Corruption `json:"corrupt,omitempty"`
	Procs    int                 `json:"procs"`
	Files    int                 `json:"files"`
	Loops    int                 `json:"loops"`
	Inlined  int                 `json:"inlined"`
	Problems map[string]int      `json:"problems,omitempty"`
}

// Paths in the warnings stand for the input's and its debug file's,
// whatever they were called where the entry was made.
const (
	binToken = "\x00input\x00"
	dbgToken = "\x00debug file\x00"
)

func notesOf(r *Result, rel relocation) notes {
	n := notes{Format: formatVersion, Procs: r.NumProcs, Files: r.NumFiles,
		Loops: r.NumLoops, Inlined: r.NumInlined, Problems: r.ProblemCounts}
	for _, w := range r.Warnings {
		n.Warnings = append(n.Warnings, rel.hide(w))
	}
	for _, c := range r.Corrupt {
		if rel.dbg != "" && c.File == rel.dbg {
			c.File = dbgToken
		}
		n.Corrupt = append(n.Corrupt, c)
	}
	return n
}

// hide replaces the path that starts a warning ("<path>: ...") by its
// token.
func (rl relocation) hide(w string) string {
	if rl.dbg != "" && strings.HasPrefix(w, rl.dbg+": ") {
		return dbgToken + w[len(rl.dbg):]
	}
	if strings.HasPrefix(w, rl.bin+": ") {
		return binToken + w[len(rl.bin):]
	}
	return w
}

func (rl relocation) show(w string) string {
	if rest, ok := strings.CutPrefix(w, dbgToken); ok {
		return rl.dbg + rest
	}
	if rest, ok := strings.CutPrefix(w, binToken); ok {
		return rl.bin + rest
	}
	return w
}

func (n notes) result(rel relocation) *Result {
	r := &Result{NumProcs: n.Procs, NumFiles: n.Files, NumLoops: n.Loops,
		NumInlined: n.Inlined, ProblemCounts: n.Problems, DebugFile: rel.dbg, DebugSource: rel.dbgFrom}
	for _, w := range n.Warnings {
		r.Warnings = append(r.Warnings, rel.show(w))
	}
	for _, c := range n.Corrupt {
		if c.File == dbgToken {
			c.File = rel.dbg
		}
		r.Corrupt = append(r.Corrupt, c)
	}
	return r
}

// SelfID names this build of bloop in cache keys: entries that other
// packages derive from bloop's analyses are kept apart by it, as
// structure files are.
func SelfID(c *cache.Cache) (string, error) { return selfID(c) }
