package profile

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"bloop/structure"
)

// ElemKind is the kind of a static scope on a frame's path.
type ElemKind uint8

// Static scope kinds, outermost to innermost.
const (
	ElemProc   ElemKind = iota // a procedure (its own frame)
	ElemInline                 // code inlined from a callee
	ElemLoop                   // a loop
	ElemStmt                   // a source line
)

// Elem is one static scope of the structure tree.
type Elem struct {
	Kind     ElemKind
	Name     string // procedure or inlined callee
	Module   string // ElemProc: the load module's name
	File     string
	Line     int    // procedure or callee: declaration line; loop: header; statement: its line
	CallFile string // ElemInline: the call site
	CallLine int
	Addr     uint64 // ElemLoop: the loop's entry (two loops may share a line)
}

// Label is how the views print the scope.
func (e *Elem) Label() string {
	switch e.Kind {
	case ElemProc:
		return e.Name
	case ElemInline:
		if e.CallLine > 0 {
			return fmt.Sprintf("[inlined] %s (called at %s:%d)", e.Name, base(e.CallFile), e.CallLine)
		}
		return "[inlined] " + e.Name
	case ElemLoop:
		return fmt.Sprintf("loop at %s:%d", base(e.File), e.Line)
	}
	return fmt.Sprintf("%s:%d", base(e.File), e.Line)
}

func base(f string) string {
	if i := strings.LastIndexByte(f, '/'); i >= 0 {
		return f[i+1:]
	}
	return f
}

// scopeIndex maps file addresses to the path of static scopes holding
// them (procedure, inlined calls, loops, statement), from bloop's
// structure of the module.
type scopeIndex struct {
	entries []indexEntry
}

type indexEntry struct {
	lo, hi uint64
	path   []*Elem
}

func (x *scopeIndex) lookup(addr uint64) []*Elem {
	if x == nil {
		return nil
	}
	es := x.entries
	i := sort.Search(len(es), func(i int) bool { return es[i].lo > addr }) - 1
	if i >= 0 && addr < es[i].hi {
		return es[i].path
	}
	return nil
}

func (x *scopeIndex) sort() {
	sort.Slice(x.entries, func(i, j int) bool { return x.entries[i].lo < x.entries[j].lo })
}

func with(path []*Elem, e *Elem) []*Elem {
	return append(path[:len(path):len(path)], e)
}

// indexModule indexes a scope tree from pipeline.Analyze.
func indexModule(mod *structure.Module, modName string) *scopeIndex {
	x := &scopeIndex{}
	var walk func(s *structure.Scope, file string, path []*Elem, callFile string, callLine int)
	walk = func(s *structure.Scope, file string, path []*Elem, callFile string, callLine int) {
		switch s.Kind {
		case structure.Proc:
			path = with(path, &Elem{Kind: ElemProc, Name: s.Name, Module: modName, File: file, Line: s.Line})
		case structure.Alien:
			switch {
			case s.IsGuard():
				file = s.File // code of the enclosing context written in another file
			case s.IsCallee() || s.IsLoneAlien():
				path = with(path, &Elem{Kind: ElemInline, Name: s.Name, File: s.File, Line: s.Line, CallFile: callFile, CallLine: callLine})
				file = s.File
			default: // the call-site half of an inline pair
				callFile, callLine = s.File, s.Line
			}
		case structure.Loop:
			path = with(path, &Elem{Kind: ElemLoop, File: s.File, Line: s.Line, Addr: s.Entry})
			file = s.File
		case structure.Stmt:
			f := file
			if s.File != "" {
				f = s.File
			}
			p := with(path, &Elem{Kind: ElemStmt, File: f, Line: s.Line})
			for _, r := range s.Ranges {
				x.entries = append(x.entries, indexEntry{r.Lo, r.Hi, p})
			}
		}
		for _, c := range s.Children {
			walk(c, file, path, callFile, callLine)
		}
	}
	for _, f := range mod.Files {
		for _, p := range f.Procs {
			walk(p, f.Name, nil, "", 0)
		}
	}
	x.sort()
	return x
}

// structLM is one LM element of a structure file, indexed.
type structLM struct {
	file  string // the structure file
	name  string // the LM's n: the path the module had when it was analysed
	node  *structure.Node
	index *scopeIndex
}

// indexDoc indexes the LM elements of a structure file.
func indexDoc(doc *structure.Doc) []structLM {
	var out []structLM
	var walk func(n *structure.Node, x *scopeIndex, mod, file string, path []*Elem, callFile string, callLine int)
	walk = func(n *structure.Node, x *scopeIndex, mod, file string, path []*Elem, callFile string, callLine int) {
		line, _ := strconv.Atoi(n.Value("l"))
		switch n.Tag {
		case "LM":
			mod = n.Value("n")
			x = &scopeIndex{}
			out = append(out, structLM{file: doc.Name, name: mod, node: n, index: x})
		case "F":
			file = n.Value("n")
		case "P":
			path = with(path, &Elem{Kind: ElemProc, Name: n.Value("n"), Module: base(mod), File: file, Line: line})
		case "A":
			name := n.Value("n")
			switch {
			case name == "<inline>":
				file = n.Value("f")
			case name != "":
				path = with(path, &Elem{Kind: ElemInline, Name: name, File: n.Value("f"), Line: line, CallFile: callFile, CallLine: callLine})
				file = n.Value("f")
			default:
				callFile, callLine = n.Value("f"), line
			}
		case "L":
			rs, _ := structure.ParseRanges(n.Value("v"))
			e := &Elem{Kind: ElemLoop, File: n.Value("f"), Line: line}
			if len(rs) > 0 {
				e.Addr = rs[0].Lo
			}
			path = with(path, e)
			file = n.Value("f")
		case "S":
			rs, _ := structure.ParseRanges(n.Value("v"))
			p := with(path, &Elem{Kind: ElemStmt, File: file, Line: line})
			for _, r := range rs {
				if x != nil {
					x.entries = append(x.entries, indexEntry{r.Lo, r.Hi, p})
				}
			}
		}
		for _, c := range n.Children {
			walk(c, x, mod, file, path, callFile, callLine)
		}
	}
	walk(doc.Root, nil, "", "", nil, "", 0)
	for _, lm := range out {
		lm.index.sort()
	}
	return out
}
