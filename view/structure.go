package view

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"bloop/source"
	"bloop/structure"
)

// StructData is what the structure page embeds: one module's scope tree
// (the module, its files, their procedures, and below them inlined
// calls, loops and statements) in preorder, as columns, with strings
// in a table, and the sources its statements are in.
type StructData struct {
	Version int    `json:"version"`
	Module  string `json:"module"`
	// Proc is the --proc expression the procedures were chosen by.
	Proc    string   `json:"proc,omitempty"`
	Strings []string `json:"strings"`
	Counts  Counts   `json:"counts"`
	Tree    STree    `json:"tree"`
	Files   []File   `json:"files"`
}

// Counts are the tree's scopes by kind.
type Counts struct {
	Files   int `json:"files"`
	Procs   int `json:"procs"`
	Inlined int `json:"inlined"`
	Loops   int `json:"loops"`
	Stmts   int `json:"stmts"`
}

// Node kinds of the structure tree. An inline pair of hpcstruct's
// format (call site, callee) is one Inlined node carrying its call site.
const (
	SProc    = 0
	SInlined = 1 // an inlined call, or a lone alien context (no call site)
	SLoop    = 2
	SStmt    = 3
	SGuard   = 4 // code of the enclosing context written in another file
	SFile    = 5
	SModule  = 6
)

// STree is the scope tree in preorder: each node's kind, name (string),
// file (string: a procedure's, callee's or loop's file, a statement's
// own), line and number of children. Addr holds the address (a
// procedure's or loop's entry, a statement's first byte) in hex, "" for
// the kinds without one; Size is a statement's bytes. Calls are triples (node, file, line): the call
// sites of inlined calls.
type STree struct {
	Kind  []int    `json:"kind"`
	Name  []int    `json:"name"`
	File  []int    `json:"file"`
	Line  []int    `json:"line"`
	Kids  []int    `json:"kids"`
	Addr  []string `json:"addr"`
	Size  []int    `json:"size"`
	Calls []int    `json:"calls"`
}

// DefaultMaxScopes bounds the structure page: a tree of more nodes makes
// a page that browsers open too slowly, or not at all (python3.11's is
// about 330,000 and opens in about 1.3 s).
const DefaultMaxScopes = 600000

// StructOptions tune the structure page.
type StructOptions struct {
	Sources Options
	// Proc, when set, keeps only the procedures whose name or link
	// name it matches (bloop struct --proc).
	Proc *regexp.Regexp
	// MaxScopes bounds the tree (0: DefaultMaxScopes).
	MaxScopes int
}

// ErrTooLarge says that a structure page would hold too many scopes.
type ErrTooLarge struct {
	Module    string
	Scopes    int // at least this many
	MaxScopes int
}

func (e *ErrTooLarge) Error() string {
	return fmt.Sprintf("%s: more than %d scopes: a page this large would not open in a browser; choose procedures with --proc REGEXP", e.Module, e.MaxScopes)
}

// StructWriter makes the structure page of one module from the scopes
// bloop struct writes, as the XML and JSON writers take them
// (structfile's writer), and writes it on Close.
type StructWriter struct {
	w        io.Writer
	o        StructOptions
	d        *StructData
	strs     *strTable
	b        *streeBuilder
	file     int // the open file node, -1 for none
	fileName string
	err      error
}

// NewStructWriter returns a writer of the structure page to w.
func NewStructWriter(w io.Writer, o StructOptions) *StructWriter {
	if o.MaxScopes == 0 {
		o.MaxScopes = DefaultMaxScopes
	}
	d := &StructData{Version: 1, Tree: newSTree(), Files: []File{}}
	if o.Proc != nil {
		d.Proc = o.Proc.String()
	}
	strs := newStrTable()
	return &StructWriter{w: w, o: o, d: d, strs: strs, b: &streeBuilder{t: &d.Tree, s: strs}, file: -1}
}

func (s *StructWriter) node(kind int, name, file string, line int, addr uint64, size int) int {
	return s.b.node(kind, name, file, line, addr, size)
}

// BeginModule starts the tree at the module.
func (s *StructWriter) BeginModule(path, name string) {
	s.d.Module = path
	if s.o.Sources.Fetcher != nil && len(s.o.Sources.BuildIDs) == 0 {
		// The module's sources are fetched by its build-id.
		if id := BuildIDOf(path); id != nil {
			s.o.Sources.BuildIDs = [][]byte{id}
		}
	}
	s.node(SModule, name, path, 0, 0, 0)
}

// Proc adds a procedure of file (nil: a file without procedures).
func (s *StructWriter) Proc(file string, p *structure.Scope) {
	if s.err != nil {
		return
	}
	if s.o.Proc != nil && (p == nil || !s.o.Proc.MatchString(p.Name) && (p.LinkName == "" || !s.o.Proc.MatchString(p.LinkName))) {
		return
	}
	if s.file < 0 || file != s.fileName {
		s.file = s.node(SFile, file, file, 0, 0, 0)
		s.fileName = file
		s.d.Tree.Kids[0]++
		s.d.Counts.Files++
	}
	if p == nil {
		return
	}
	s.d.Tree.Kids[s.file]++
	s.scope(structure.Interpret(p, structure.FileCtx(file)))
	if n := len(s.d.Tree.Kind); n > s.o.MaxScopes {
		s.err = &ErrTooLarge{Module: s.d.Module, Scopes: n, MaxScopes: s.o.MaxScopes}
	}
}

// scope adds it and its subtree. It returns the nodes added at its
// level: an inline pair's call site adds its callees, not itself.
func (s *StructWriter) scope(it structure.Item) int {
	var i int
	switch it.Role {
	case structure.RoleProc:
		i = s.node(SProc, it.Name, it.File, it.Line, it.Entry, 0)
		s.d.Counts.Procs++
	case structure.RoleLoop:
		i = s.node(SLoop, "", it.File, it.Line, it.Entry, 0)
		s.d.Counts.Loops++
	case structure.RoleStmt:
		var lo uint64
		size := 0
		for k, r := range it.Ranges {
			if k == 0 {
				lo = r.Lo
			}
			size += int(r.Hi - r.Lo)
		}
		s.node(SStmt, "", it.File, it.Line, lo, size)
		s.d.Counts.Stmts++
		return 1
	case structure.RoleGuard:
		i = s.node(SGuard, "", it.File, it.Line, 0, 0)
	case structure.RoleInlined:
		i = s.node(SInlined, it.Name, it.File, it.Line, 0, 0)
		s.d.Counts.Inlined++
	case structure.RoleCallSite:
		// The call site: its callees stand in its place.
		n := 0
		for c := range it.Children() {
			k := len(s.d.Tree.Kind)
			n += s.scope(c)
			if c.Site != nil {
				s.b.call(k, c.Site.File, c.Site.Line)
			}
		}
		return n
	default:
		return 0
	}
	kids := 0
	for c := range it.Children() {
		kids += s.scope(c)
	}
	s.d.Tree.Kids[i] = kids
	return 1
}

// EndModule ends the module.
func (s *StructWriter) EndModule() {}

// Close embeds the sources of the statements and writes the page, or
// returns ErrTooLarge and writes nothing.
func (s *StructWriter) Close() error {
	if s.err != nil {
		return s.err
	}
	s.d.Strings = s.strs.list
	s.addSources()
	title := "bloop struct: " + s.d.Module
	return writePage(s.w, "page-struct", title, s.d, "common.js", "srctable.js", "struct.js")
}

// maxStructSources bounds the sources one structure page embeds; files
// past it are listed as not embedded.
const maxStructSources = 32 << 20

// addSources embeds the files statements are in, in path order.
func (s *StructWriter) addSources() {
	seen := map[int]bool{}
	var paths []string
	t := &s.d.Tree
	for i, k := range t.Kind {
		if k == SStmt && !seen[t.File[i]] {
			seen[t.File[i]] = true
			paths = append(paths, s.strs.list[t.File[i]])
		}
	}
	sort.Strings(paths)
	s.d.Files = append(s.d.Files, embedSources(s.o.Sources, s.strs, paths)...)
}

// embedSources reads the files of a structure or diff page, in the order
// of paths: bloop's "[...]" name of code the line table gives no file
// gets a note, as does every file once the page holds maxStructSources
// bytes of sources.
func embedSources(o Options, strs *strTable, paths []string) []File {
	finder := &source.Finder{Dirs: o.SourceDirs}
	var files []File
	total := 0
	for _, p := range paths {
		idx := strs.idx[p]
		switch {
		case strings.HasPrefix(p, "["):
			files = append(files, File{Path: idx, Note: p + ": code without a source file in the line table"})
		case total > maxStructSources:
			files = append(files, File{Path: idx, Note: fmt.Sprintf("%s: not embedded: the page holds %d MB of sources already", p, maxStructSources>>20)})
		default:
			f := readSource(finder, o, p, idx, o.BuildIDs)
			total += len(f.Text)
			files = append(files, f)
		}
	}
	return files
}
