// Package structfile produces one binary's structure file: it opens the
// binary, runs the pipeline and streams the tree to an hpcstruct XML or
// JSON writer, through the structure cache when one is given. bloop
// struct (one binary or a measurement directory) and bloop report share it.
package structfile

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"bloop/loader"
	"bloop/pipeline"
	"bloop/procs"
	"bloop/source"
	"bloop/structure"
)

// Options decide what is written.
type Options struct {
	Load     loader.Options
	Pipeline pipeline.Options
	JSON     bool // bloop's JSON instead of hpcstruct XML
	Pretty   bool // indented XML
	// Writer, when set, makes the writer of another format (the HTML
	// page of package view, which this package cannot import). Such
	// output is not cached.
	Writer func(io.Writer) Writer
	// ModulePath is the LM's path; "" means the binary's absolute path
	// with links resolved, which is what hpcrun records and hpcprof matches.
	ModulePath string
	// Replace rewrites source file names (hpcstruct's -R old=new).
	Replace []Replacement
	// Progress, when set, is told the procedures done out of total as
	// they are written.
	Progress func(done, total int)
}

// Result is what a run found besides the file.
type Result struct {
	Image    *loader.Image // nil when the file came from the cache
	Procs    *procs.Table
	Problems []*pipeline.Problem
	NumProcs int // procedures written
	NumFiles int // F elements written
	// NumLoops and NumInlined count the loops and inlined calls written
	// (callee halves of inline pairs and lone alien contexts; guards are
	// not calls), for build pipelines' manifests.
	NumLoops   int
	NumInlined int
	// ProblemCounts counts Problems by kind (pipeline.Kind*); nil when
	// there are none. A file from the cache has these counts and no
	// Problems.
	ProblemCounts map[string]int
	Load          time.Duration
	Analyze       time.Duration // analysis and writing
	Cached        bool
	// CacheTier is where a cached file came from: "local" or "remote"
	// (cache.TierLocal, cache.TierRemote); "" when it was analysed.
	CacheTier string
	// Warnings and Corrupt are what loading said of the input (the
	// image's warnings, the corrupt data it repaired or ignored). They
	// come back with a file from the cache: a damaged binary is reported
	// on every run, not only on the one that analysed it.
	Warnings []string
	Corrupt  []loader.Corruption
	// DebugFile is the separate debug file read ("" for none) and
	// DebugSource where it came from (loader.DebugLocal or
	// loader.DebugDebuginfod), for -v and the manifest.
	DebugFile, DebugSource string
}

// Open loads the binary, as the first phase of Write.
func Open(bin string, opt Options) (*loader.Image, error) {
	return pipeline.Open(bin, opt.Load, opt.Pipeline)
}

// Write analyses bin and writes its structure file to w.
func Write(bin string, opt Options, w io.Writer) (*Result, error) {
	t0 := time.Now()
	img, err := Open(bin, opt)
	if err != nil {
		return nil, err
	}
	r := &Result{Image: img, Load: time.Since(t0)}
	err = WriteImage(img, opt, w, r)
	return r, err
}

// WriteImage analyses a loaded image and writes its structure file to w,
// filling r.
func WriteImage(img *loader.Image, opt Options, w io.Writer, r *Result) error {
	t1 := time.Now()
	r.Warnings, r.Corrupt = img.Warnings, img.Corrupt
	r.DebugFile, r.DebugSource = img.DebugFile, img.DebugSource
	path := opt.ModulePath
	if path == "" {
		path = img.Path
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
	}
	popt := opt.Pipeline
	popt.Procs = pipeline.Procedures(img, popt)
	r.Procs = popt.Procs
	total := 0
	for _, n := range popt.Procs.Counts() {
		total += n
	}
	var sw Writer = structure.NewXMLWriter(w, opt.Pretty)
	switch {
	case opt.Writer != nil:
		sw = opt.Writer(w)
	case opt.JSON:
		sw = structure.NewJSONWriter(w)
	}
	switch x := sw.(type) {
	case *structure.XMLWriter:
		x.HasCalls = pipeline.HasCalls(img, popt)
	case *structure.JSONWriter:
		x.HasCalls = pipeline.HasCalls(img, popt)
	}
	sw.BeginModule(path, img.Name)
	last := ""
	probs, err := pipeline.Run(img, popt, func(file string, p *structure.Scope) error {
		if r.NumProcs == 0 && r.NumFiles == 0 || file != last {
			r.NumFiles++
			last = file
		}
		if p != nil {
			r.NumProcs++
			r.count(p)
			if opt.Progress != nil {
				opt.Progress(min(r.NumProcs, total), total)
			}
		}
		if len(opt.Replace) > 0 {
			file = ReplacePath(opt.Replace, file)
			replaceFiles(opt.Replace, p)
		}
		sw.Proc(file, p)
		return nil
	})
	r.Problems = probs
	for _, p := range probs {
		if r.ProblemCounts == nil {
			r.ProblemCounts = map[string]int{}
		}
		r.ProblemCounts[p.Kind]++
	}
	if err != nil {
		return err
	}
	sw.EndModule()
	err = sw.Close()
	r.Analyze = time.Since(t1)
	return err
}

// count adds a procedure's loops and inlined calls to r.
func (r *Result) count(p *structure.Scope) {
	structure.Walk(p, func(s *structure.Scope) {
		switch s.Role() {
		case structure.RoleLoop:
			r.NumLoops++
		case structure.RoleInlined:
			r.NumInlined++
		}
	})
}

// Writer is what an output format provides: it takes a module's
// procedures, file by file, as they are analysed (the XML and JSON
// writers of package structure are ones).
type Writer interface {
	BeginModule(path, name string)
	Proc(file string, p *structure.Scope)
	EndModule()
	Close() error
}

// Replacement substitutes New for the prefix Old of a path.
type Replacement struct{ Old, New string }

// ParseReplacement reads hpcstruct's -R 'old=new'; "\=" is an "=" inside
// a path.
func ParseReplacement(s string) (Replacement, error) {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '=':
			cur.WriteByte('=')
			i++
		case s[i] == '=':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	parts = append(parts, cur.String())
	switch {
	case len(parts) == 1:
		return Replacement{}, fmt.Errorf("replace-path %q: the '=' between the old and the new path is missing", s)
	case len(parts) > 2:
		return Replacement{}, fmt.Errorf("replace-path %q: more than one '=' (write \\= for one inside a path)", s)
	case parts[0] == "":
		return Replacement{}, fmt.Errorf("replace-path %q: empty old path", s)
	}
	return Replacement{parts[0], parts[1]}, nil
}

// ReplacePath applies the first replacement whose Old is a prefix of p
// (bloop struct -R for the paths it writes, the HTML pages for the
// sources they look for).
func ReplacePath(rs []Replacement, p string) string {
	for _, r := range rs {
		if rest, ok := strings.CutPrefix(p, r.Old); ok {
			return r.New + rest
		}
	}
	return p
}

// replaceFiles rewrites the file names of a procedure's scopes.
func replaceFiles(rs []Replacement, s *structure.Scope) {
	if s == nil {
		return
	}
	s.File = ReplacePath(rs, s.File)
	for _, c := range s.Children {
		replaceFiles(rs, c)
	}
}

// sourceFinder returns the finder the hybrid mode will use, so that the
// sources it reads can be recorded.
func sourceFinder(opt *Options) *source.Finder {
	if opt.Pipeline.Sources == nil {
		opt.Pipeline.Sources = &source.Finder{Dirs: opt.Pipeline.SourceDirs, Fetcher: opt.Pipeline.SourceFetcher}
	}
	return opt.Pipeline.Sources
}
