package scopes

import (
	"sort"
)

// hpcstruct locates a loop bottom-up, after its nested loops: it lays the
// loop's own code (nested loops' blocks excluded) and its nested loops out
// in one inline tree and walks down from the procedure while that tree is a
// single chain of calls, stopping at the first level that holds a nested
// loop, branches into two calls, or holds an exit condition of the loop's
// own code. Code above that level is pulled into it. The header file comes
// from the exit conditions (nested loops' included) at that level's depth,
// whatever branch they are in; the line is the smallest of nested loops' at
// the level and of the exit conditions at that depth or below, a deeper one
// seen at its call site, of those in the header's file only. Irreducible nested loops of an irreducible loop
// with its header are then merged into it. (HPCToolkit's lib/banal
// Struct.cpp findLoopHeader and mergeIrredLoops; the deeper exits' call
// sites are measured on the references and libgsl.)

// locate sets p's (and its nested plans') context and header line by that
// rule.
func (b *builder) locate(p *loopPlan) {
	for _, c := range p.kids {
		b.locate(c)
	}
	own, ownExits := b.ownPaths(p)
	var at []*inlKey
	for {
		next, ok := descend(at, own, p.kids)
		if !ok || hasDepth(ownExits, len(at)) {
			break
		}
		at = append(at, next)
	}
	p.h.abs = at
	p.h.key = b.locatedHeader(p, at, own)
	mergeIrreducible(p)
}

// ownPaths lists the inline paths of p's own instructions and of the last
// instructions of its own exit-condition blocks.
func (b *builder) ownPaths(p *loopPlan) (own, exits [][]*inlKey) {
	g := b.in.Graph
	isExit := map[int]bool{}
	for _, v := range b.exitConds(p) {
		isExit[v] = true
	}
	for _, v := range p.own {
		blk := g.Blocks[v]
		for i := range blk.Insts {
			q := b.path(blk.Insts[i].Addr)
			if n := len(own); n == 0 || !samePath(own[n-1], q) {
				own = append(own, q)
			}
		}
		if isExit[v] {
			exits = append(exits, b.path(blk.Last().Addr))
		}
	}
	return own, exits
}

// descend returns the one call below context at that all code and nested
// loops under it go through; false when a nested loop sits at at itself, or
// there is no such call or more than one.
func descend(at []*inlKey, own [][]*inlKey, kids []*loopPlan) (*inlKey, bool) {
	d := len(at)
	var next *inlKey
	one := func(q []*inlKey) bool {
		if len(q) <= d {
			return true
		}
		if next == nil {
			next = q[d]
		}
		return q[d] == next
	}
	for _, c := range kids {
		if len(c.h.abs) == d || !one(c.h.abs) {
			return nil, false
		}
	}
	for _, q := range own {
		if !one(q) {
			return nil, false
		}
	}
	return next, next != nil
}

func hasDepth(paths [][]*inlKey, d int) bool {
	for _, q := range paths {
		if len(q) == d {
			return true
		}
	}
	return false
}

// exitCond is an exit condition's source position.
type exitCond struct {
	addr uint64
	key  stmtKey
}

// locatedHeader picks the header file, then line, of a loop placed at at,
// by hpcstruct's order of preference.
func (b *builder) locatedHeader(p *loopPlan, at []*inlKey, own [][]*inlKey) stmtKey {
	d := len(at)
	exits := b.exitsAtDepth(p, d)
	var kidsAt []*loopPlan
	for _, c := range p.kids {
		if len(c.h.abs) == d {
			kidsAt = append(kidsAt, c)
		}
	}
	sort.SliceStable(kidsAt, func(i, j int) bool { return kidsAt[i].h.entry < kidsAt[j].h.entry })
	calls := callsBelow(d, own, p.kids)
	hdr := b.locatedFile(p, d, exits, calls, kidsAt)
	for _, c := range kidsAt {
		if fileBase(c.h.key.file) == fileBase(hdr.file) {
			hdr.line = minLine0(hdr.line, c.h.key.line)
		}
	}
	for _, e := range b.exitsSeenAt(p, d) {
		if fileBase(e.key.file) == fileBase(hdr.file) {
			hdr.line = minLine0(hdr.line, e.key.line)
		}
	}
	return hdr
}

// minLine0 is hpcstruct's running minimum of header lines: an unset (0)
// minimum takes any line, a set one only smaller known lines.
func minLine0(cur, l int) int {
	if cur == 0 || (l > 0 && l < cur) {
		return l
	}
	return cur
}

// locatedFile is the header's file (and, in the last resort, line):
// the procedure's file if a top-level exit is in it, a call's file that an
// exit is in, any exit's file, the procedure's file at top level, a call's
// file, a nested loop's, then the first statement's.
func (b *builder) locatedFile(p *loopPlan, d int, exits []exitCond, calls []*inlKey, kidsAt []*loopPlan) stmtKey {
	if d == 0 {
		pf := ProcFile(Input{Img: b.in.Img, Func: b.in.Func, Sub: b.in.Sub, Hpcstruct: true})
		for _, e := range exits {
			if e.key.file != "" && fileBase(e.key.file) == fileBase(pf) {
				return stmtKey{file: pf}
			}
		}
	}
	for _, k := range calls {
		for _, e := range exits {
			if f, _ := k.site(); e.key.file != "" && fileBase(e.key.file) == fileBase(f) {
				return stmtKey{file: f}
			}
		}
	}
	for _, e := range exits {
		if e.key.file != "" {
			return stmtKey{file: e.key.file}
		}
	}
	if d == 0 {
		return stmtKey{file: ProcFile(Input{Img: b.in.Img, Func: b.in.Func, Sub: b.in.Sub, Hpcstruct: true})}
	}
	for _, k := range calls {
		if f, _ := k.site(); f != "" {
			return stmtKey{file: f}
		}
	}
	for _, c := range kidsAt {
		if c.h.key.file != "" {
			return stmtKey{file: c.h.key.file}
		}
	}
	return b.firstOwnStmt(p, d)
}

// exitsAtDepth lists, by address, the loop's exit conditions (nested
// loops' included) whose inline depth is d.
func (b *builder) exitsAtDepth(p *loopPlan, d int) []exitCond {
	g := b.in.Graph
	var out []exitCond
	for _, v := range b.exitConds(p) {
		a := g.Blocks[v].Last().Addr
		if len(b.path(a)) == d {
			out = append(out, exitCond{a, b.line(a)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].addr < out[j].addr })
	return out
}

// exitsSeenAt lists, by address, the loop's exit conditions at depth d
// or deeper, a deeper one at its call site at depth d.
func (b *builder) exitsSeenAt(p *loopPlan, d int) []exitCond {
	g := b.in.Graph
	var out []exitCond
	for _, v := range b.exitConds(p) {
		a := g.Blocks[v].Last().Addr
		switch q := b.path(a); {
		case len(q) == d:
			out = append(out, exitCond{a, b.line(a)})
		case len(q) > d:
			f, l := q[d].site()
			out = append(out, exitCond{a, stmtKey{f, l}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].addr < out[j].addr })
	return out
}

// callsBelow lists the distinct calls one level below depth d of the
// loop's code and nested loops. hpcstruct visits them in the order of its
// string table's indices; bloop by call site, which is fixed, and only
// matters when two calls' files share a base name.
func callsBelow(d int, own [][]*inlKey, kids []*loopPlan) []*inlKey {
	seen := map[*inlKey]bool{}
	var out []*inlKey
	add := func(q []*inlKey) {
		if len(q) > d && !seen[q[d]] {
			seen[q[d]] = true
			out = append(out, q[d])
		}
	}
	for _, q := range own {
		add(q)
	}
	for _, c := range kids {
		add(c.h.abs)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		af, al := a.site()
		bf, bl := b.site()
		if af != bf {
			return af < bf
		}
		if al != bl {
			return al < bl
		}
		return a.name < b.name
	})
	return out
}

// site is the call site as hpcstruct has it: an unread one is file
// "<unknown>", line 0, a file like any other for findLoopHeader. So a
// loop located in an inlined callee whose exits are all deeper, below
// calls from unread sites, takes "<unknown>" for its header file and line
// 0 (make_hol's loops in libc.so.6's argp_hol, parse_expression's).
func (k *inlKey) site() (string, int) {
	if k.unknown {
		return unknownFile, 0
	}
	return k.callFile, k.callLine
}

// firstOwnStmt is the file and line of the lowest-addressed own
// instruction at or above depth d that has a file.
func (b *builder) firstOwnStmt(p *loopPlan, d int) stmtKey {
	g := b.in.Graph
	best, addr := stmtKey{}, ^uint64(0)
	for _, v := range p.own {
		for _, in := range g.Blocks[v].Insts {
			if in.Addr >= addr || len(b.path(in.Addr)) > d {
				continue
			}
			if k := b.line(in.Addr); k.file != "" {
				best, addr = k, in.Addr
				break
			}
		}
	}
	return best
}

// exitConds lists p's exit-condition blocks as hpcstruct finds them
// (HpcstructExits).
func (b *builder) exitConds(p *loopPlan) []int {
	g := b.in.Graph
	return HpcstructExits(g, p.l, ShapeOf(g, p.l))
}

// fileBase is a file's base name, "" for none.
func fileBase(f string) string {
	if f == "" {
		return ""
	}
	return base(f)
}

// mergeIrreducible merges into an irreducible loop its irreducible nested
// loops with the same header file name and line (hpcstruct takes them for
// one source loop); their nested loops become p's, unexamined. The forest
// is Dyninst's own when the search follows its edge order
// (cfg.Graph.DyninstSuccs), so no other loop is merged.
func mergeIrreducible(p *loopPlan) {
	if !p.l.Irreducible {
		return
	}
	var kids []*loopPlan
	for _, c := range p.kids {
		if c.l.Irreducible && sameHeader(c.h.key, p.h.key) {
			p.own = append(p.own, c.own...)
			kids = append(kids, c.kids...)
			continue
		}
		kids = append(kids, c)
	}
	sort.SliceStable(kids, func(i, j int) bool { return kids[i].h.entry < kids[j].h.entry })
	p.kids = kids
}

// sameHeader compares headers as hpcstruct does: line and file base name.
func sameHeader(a, b stmtKey) bool {
	return a.line == b.line && fileBase(a.file) == fileBase(b.file)
}
