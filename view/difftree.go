package view

import (
	"strconv"

	"bloop/structure"
)

// One side's procedures as STree nodes, made from the canonical elements
// the diff package keeps (diff.DiffOptions.Detail). The nodes are the
// structure page's: a call-site A and its callee A are one inlined call
// carrying its call site, an A named "<inline>" a guard, any other named
// A outside a call site a lone alien context. Files are as the structure
// file wrote them (the canonical elements have base names only).

// sideBuilder turns one side's elements into nodes and remembers which
// node each element became, for the changes that refer to them.
type sideBuilder struct {
	*streeBuilder
	ids map[*structure.Node]int
}

func newSideBuilder(t *STree, s *strTable) *sideBuilder {
	return &sideBuilder{streeBuilder: &streeBuilder{t: t, s: s}, ids: map[*structure.Node]int{}}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// ranges returns the first address of v and its bytes in all.
func ranges(v string) (lo uint64, size int) {
	rs, err := structure.ParseRanges(v)
	if err != nil || len(rs) == 0 {
		return 0, 0
	}
	for _, r := range rs {
		size += int(r.Hi - r.Lo)
	}
	return rs[0].Lo, size
}

// fileOf is the file e says it is in (as written), else ctx.
func fileOf(e *structure.Node, ctx string) string {
	if f, ok := e.Original().Get("f"); ok {
		return f
	}
	return ctx
}

// proc adds procedure p of file path and its scopes below it; nested
// procedures are left out (the diff lists them on their own).
func (b *sideBuilder) proc(p *structure.Node, path string) int {
	entry, _ := ranges(p.Value("v"))
	i := b.node(SProc, p.Value("n"), path, atoi(p.Value("l")), entry, 0)
	b.ids[p] = i
	b.t.Kids[i] = b.children(p, path)
	return i
}

// children adds e's children and returns how many nodes that makes at
// e's level.
func (b *sideBuilder) children(e *structure.Node, file string) int {
	n := 0
	for _, c := range e.Children {
		n += b.child(c, file)
	}
	return n
}

func (b *sideBuilder) child(c *structure.Node, file string) int {
	switch c.Tag {
	case "S", "C":
		lo, size := ranges(c.Value("v"))
		b.ids[c] = b.node(SStmt, "", file, atoi(c.Value("l")), lo, size)
		return 1
	case "L":
		f := fileOf(c, file)
		entry, _ := ranges(c.Value("v"))
		i := b.node(SLoop, "", f, atoi(c.Value("l")), entry, 0)
		b.ids[c] = i
		b.t.Kids[i] = b.children(c, f)
		return 1
	case "A":
		f := fileOf(c, file)
		name := c.Value("n")
		if name != "" {
			kind := SInlined // a lone alien context
			if name == "<inline>" {
				kind, name = SGuard, ""
			}
			i := b.node(kind, name, f, atoi(c.Value("l")), 0, 0)
			b.ids[c] = i
			b.t.Kids[i] = b.children(c, f)
			return 1
		}
		// A call site: its callees stand in its place, as golden pairs
		// them (a named A inside is a callee).
		n := 0
		for _, cc := range c.Children {
			if cc.Tag != "A" || cc.Value("n") == "" {
				n += b.child(cc, f)
				continue
			}
			cf := fileOf(cc, f)
			i := b.node(SInlined, cc.Value("n"), cf, atoi(cc.Value("l")), 0, 0)
			b.ids[cc] = i
			b.call(i, f, atoi(c.Value("l")))
			b.t.Kids[i] = b.children(cc, cf)
			n++
		}
		return n
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
