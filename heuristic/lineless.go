package heuristic

import (
	"slices"
	"sort"

	"bloop/structure"
)

// continued is the line that code without a line at the top of block k
// continues, or no line when it stays where control flow put it.
//
// clang gives line 0 to code it cannot attribute to one statement (copies
// for phi nodes, hoisted and merged code), keeping the file of the row
// before it. In the DWARF it emits, an inlined call's address range stays
// open over such code while the code laid out around it is the callee's,
// so line-0 code at the top of a block is often the callee's: on the STL
// corpus programs, most of the inlined bytes the thesis engine missed. The
// line table and the graph tell when the callee's code continues: the
// block follows the code before it (it is entered by falling through),
// that code is in the line-0 row's file, every way into the block leaves
// code of the same procedure region, and the code after it is not the
// procedure's own. The line is that of the code before; it places the
// code and is not written as its statement's line.
func (e *engine) continued(k int) line {
	g := e.in.Graph
	blk := g.Blocks[k]
	if k == 0 || g.Blocks[k-1].End != blk.Start || !slices.Contains(g.Blocks[k-1].Succs, k) {
		return line{}
	}
	t := e.in.Img.Lines
	i := t.Search(blk.Start)
	if i == t.Len() {
		return line{}
	}
	r := t.Row(i)
	if r.Addr > blk.Start || r.Line != 0 || r.File == "" {
		return line{}
	}
	b := e.rowLine(i, -1, g.Blocks[k-1].Start)
	if b.ln == 0 || b.file != r.File {
		return line{}
	}
	for _, v := range blk.Preds {
		if l := e.lastLine(v); l.file != b.file || !e.sameOwner(l, b) {
			return line{}
		}
	}
	if a := e.rowLine(i, 1, g.Blocks[len(g.Blocks)-1].End); a.ln != 0 && e.matchesQuiet(e.proc, a) {
		return line{}
	}
	return b
}

// rowLine is the line of the nearest row with one before (dir -1) or
// after (dir 1) row i, through rows that adjoin, not past the address
// bound; no line when there is none.
func (e *engine) rowLine(i, dir int, bound uint64) line {
	t := e.in.Img.Lines
	q := t.Row(i)
	for j := i + dir; j >= 0 && j < t.Len(); j += dir {
		r := t.Row(j)
		if dir < 0 && (r.End != q.Addr || r.Addr < bound) || dir > 0 && (r.Addr != q.End || r.Addr >= bound) {
			break
		}
		if r.Line != 0 {
			return line{r.File, r.Line}
		}
		q = r
	}
	return line{}
}

// lastLine is the line of the last instruction of block v that has one.
func (e *engine) lastLine(v int) line {
	insts := e.in.Graph.Blocks[v].Insts
	for i := len(insts) - 1; i >= 0; i-- {
		if l := e.line(insts[i].Addr); l.ln != 0 {
			return l
		}
	}
	return line{}
}

// between is where code without a line that no path reaches goes (clang's
// alignment padding, line 0) when it lies between two pieces of one
// inlined call: an inlined call's address range stays open over padding
// between pieces of its code, so the padding goes to the innermost alien
// context that holds the instruction before it and the first one with a
// line after it. It is nil
// otherwise: the padding stays in the procedure, outside loops.
func (e *engine) between(r structure.Range) *node {
	g := e.in.Graph
	if g == nil {
		return nil
	}
	k := sort.Search(len(g.Blocks), func(i int) bool { return g.Blocks[i].Start >= r.Hi })
	if k == 0 || k == len(g.Blocks) || g.Blocks[k].Start != r.Hi || g.Blocks[k-1].End != r.Lo {
		return nil
	}
	a, b := e.last[k-1], e.first[k]
	if a == nil || b == nil {
		return nil
	}
	if x := common(a, b); x != nil && x.context().kind == structure.Alien {
		return x.context()
	}
	return nil
}

// common is the innermost node that holds both a and b, or nil.
func common(a, b *node) *node {
	da, db := a.depth(), b.depth()
	for ; da > db; da-- {
		a = a.parent
	}
	for ; db > da; db-- {
		b = b.parent
	}
	for a != b {
		a, b = a.parent, b.parent
	}
	return a
}

func (n *node) depth() int {
	d := 0
	for x := n.parent; x != nil; x = x.parent {
		d++
	}
	return d
}
