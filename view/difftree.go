package view

import (
	"bloop/diff"
	"bloop/structure"
)

// One side's procedures as STree nodes, made from the canonical elements
// the diff package keeps (diff.DiffOptions.Detail). The nodes are the
// structure page's: a call-site A and its callee A are one inlined call
// carrying its call site (structure.Interpret says which scope is what).
// Files are as the structure file wrote them (the canonical elements have
// base names only).

// sideBuilder turns one side's elements into nodes and remembers which
// node each element became, for the changes that refer to them.
type sideBuilder struct {
	*streeBuilder
	ids map[*structure.Node]int
}

func newSideBuilder(t *STree, s *strTable) *sideBuilder {
	return &sideBuilder{streeBuilder: &streeBuilder{t: t, s: s}, ids: map[*structure.Node]int{}}
}

// span is the first address of rs and its bytes in all.
func span(rs []structure.Range) (lo uint64, size int) {
	for _, r := range rs {
		size += int(r.Hi - r.Lo)
	}
	if len(rs) > 0 {
		lo = rs[0].Lo
	}
	return lo, size
}

// proc adds procedure p of file path and its scopes below it; nested
// procedures are left out (the diff lists them on their own).
func (b *sideBuilder) proc(p *structure.Node, path string) int {
	it := structure.Interpret(structure.ScopeOf(p, path), structure.FileCtx(path))
	i := b.node(SProc, it.Name, it.File, it.Line, it.Entry, 0)
	b.ids[p] = i
	b.t.Kids[i] = b.children(it)
	return i
}

// function adds the procedures of one source function on this side: one
// procedure as itself, several (a function with its clones or outlined
// parts) below a node of the function's name, at its first procedure's
// file, line and address.
func (b *sideBuilder) function(name string, ps []diff.ProcNode) int {
	if len(ps) == 1 {
		return b.proc(ps[0].Node, ps[0].Path)
	}
	first := structure.Interpret(structure.ScopeOf(ps[0].Node, ps[0].Path), structure.FileCtx(ps[0].Path))
	i := b.node(SProc, name, first.File, first.Line, first.Entry, 0)
	for _, p := range ps {
		b.proc(p.Node, p.Path)
	}
	b.t.Kids[i] = len(ps)
	return i
}

// children adds it's children and returns how many nodes that makes at
// its level.
func (b *sideBuilder) children(it structure.Item) int {
	n := 0
	for c := range it.Children() {
		n += b.child(c)
	}
	return n
}

func (b *sideBuilder) child(it structure.Item) int {
	switch it.Role {
	case structure.RoleStmt:
		lo, size := span(it.Ranges)
		b.ids[it.Src] = b.node(SStmt, "", it.File, it.Line, lo, size)
		return 1
	case structure.RoleLoop:
		i := b.node(SLoop, "", it.File, it.Line, it.Entry, 0)
		b.ids[it.Src] = i
		b.t.Kids[i] = b.children(it)
		return 1
	case structure.RoleGuard, structure.RoleInlined:
		kind, name := SInlined, it.Name // an inlined call or a lone alien context
		if it.Role == structure.RoleGuard {
			kind, name = SGuard, ""
		}
		i := b.node(kind, name, it.File, it.Line, 0, 0)
		b.ids[it.Src] = i
		if it.Site != nil {
			b.call(i, it.Site.File, it.Site.Line)
		}
		b.t.Kids[i] = b.children(it)
		return 1
	case structure.RoleCallSite:
		// Its callees stand in its place, as the diff pairs them.
		return b.children(it)
	}
	return 0 // P: a nested procedure, listed on its own
}

// refs returns the nodes of elements es (elements not in the tree, as
// those of procedures left out, are skipped).
func (b *sideBuilder) refs(es []*structure.Node) []int {
	out := []int{}
	for _, e := range es {
		if i, ok := b.ids[e]; ok {
			out = append(out, i)
		}
	}
	return out
}
