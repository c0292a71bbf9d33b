package profile

import (
	"fmt"
	"sort"
	"strings"
	"sync"

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
	// noted: the profile has kept its aliases (Profile.noteAliases), a
	// flag where a look-up of a map per frame placed was a tenth of
	// placing the g++ profile's stacks.
	noted bool
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
	// outside holds, for an analysis of the procedures holding given
	// addresses, the line-table row of each of them outside every
	// entry: what scopesOf would read the module's DWARF for.
	outside map[uint64]lineRow
	// pages index the entries by 4 KiB page of address (pageIndex),
	// made on the first lookup.
	pagesOnce sync.Once
	pages     pageIndex
}

// lineRow is a line table's answer for an address; ok is false when the
// table has no row there.
type lineRow struct {
	file string
	line int
	ok   bool
}

// lineOutside is the kept line-table answer for addr, outside the
// entries; known is false when the index does not have it.
func (x *scopeIndex) lineOutside(addr uint64) (row lineRow, known bool) {
	if x == nil {
		return lineRow{}, false
	}
	row, known = x.outside[addr]
	return row, known
}

type indexEntry struct {
	lo, hi uint64
	path   []*Elem
}

func (x *scopeIndex) lookup(addr uint64) []*Elem {
	if x == nil {
		return nil
	}
	x.pagesOnce.Do(func() { x.pages = makePageIndex(x.entries) })
	es := x.entries
	i := x.pages.count(es, addr) - 1
	if i >= 0 && addr < es[i].hi {
		return es[i].path
	}
	return nil
}

// pageIndex counts, for each 4 KiB page from base on, the entries that
// start below it: an address's entry is then searched among those that
// start in its page. A binary search of all of a large program's
// entries (cc1plus: one per line range) missed the caches at each of its
// 20 steps, 15% of placing the g++ profile's stacks.
type pageIndex struct {
	base  uint64
	below []int32 // below[p]: entries starting below base + p<<12
}

// pageBits is a page's size; maxPages bounds the index (4 GiB of
// addresses), past which entries are searched whole.
const (
	pageBits = 12
	maxPages = 1 << 20
)

// makePageIndex indexes entries, sorted by start.
func makePageIndex(es []indexEntry) pageIndex {
	if len(es) == 0 || len(es) > 1<<31-1 {
		return pageIndex{}
	}
	base := es[0].lo &^ (1<<pageBits - 1)
	n := (es[len(es)-1].lo-base)>>pageBits + 1
	if n > maxPages {
		return pageIndex{}
	}
	below := make([]int32, n+1)
	i := 0
	for p := range below {
		start := base + uint64(p)<<pageBits
		for i < len(es) && es[i].lo < start {
			i++
		}
		below[p] = int32(i)
	}
	return pageIndex{base: base, below: below}
}

// count is the number of entries of es starting at or below addr.
func (x pageIndex) count(es []indexEntry, addr uint64) int {
	lo, hi := 0, len(es)
	if x.below != nil {
		if addr < x.base {
			return 0
		}
		p := (addr - x.base) >> pageBits
		if p+1 >= uint64(len(x.below)) {
			return len(es) // past the last entry's start
		}
		lo, hi = int(x.below[p]), int(x.below[p+1])
	}
	return lo + sort.Search(hi-lo, func(i int) bool { return es[lo+i].lo > addr })
}

func (x *scopeIndex) sort() {
	sort.Slice(x.entries, func(i, j int) bool { return x.entries[i].lo < x.entries[j].lo })
}

func with(path []*Elem, e *Elem) []*Elem {
	return append(path[:len(path):len(path)], e)
}

// indexModule indexes a scope tree, from pipeline.Analyze or a
// structure file.
func indexModule(mod *structure.Module, modName string) *scopeIndex {
	x := &scopeIndex{}
	for _, f := range mod.Files {
		for _, p := range f.Procs {
			x.add(structure.Interpret(p, structure.FileCtx(f.Name)), modName, nil)
		}
	}
	x.sort()
	return x
}

// add indexes the statements of it and below; path is the scopes above it.
func (x *scopeIndex) add(it structure.Item, modName string, path []*Elem) {
	switch it.Role {
	case structure.RoleProc:
		path = with(path, &Elem{Kind: ElemProc, Name: it.Name, Module: modName, File: it.File, Line: it.Line})
	case structure.RoleInlined:
		e := &Elem{Kind: ElemInline, Name: it.Name, File: it.File, Line: it.Line}
		if it.Site != nil {
			e.CallFile, e.CallLine = it.Site.File, it.Site.Line
		}
		path = with(path, e)
	case structure.RoleLoop:
		path = with(path, &Elem{Kind: ElemLoop, File: it.File, Line: it.Line, Addr: it.Entry})
	case structure.RoleStmt:
		p := with(path, &Elem{Kind: ElemStmt, File: it.File, Line: it.Line})
		for _, r := range it.Ranges {
			x.entries = append(x.entries, indexEntry{r.Lo, r.Hi, p})
		}
	}
	for c := range it.Children() {
		x.add(c, modName, path)
	}
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
	for _, m := range doc.Modules() {
		out = append(out, structLM{file: doc.Name, name: m.Path, node: m.Src, index: indexModule(m, base(m.Path))})
	}
	return out
}
