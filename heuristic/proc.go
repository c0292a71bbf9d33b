package heuristic

import (
	"math"
	"sort"

	"bloop/normalize"
	"bloop/scopes"
	"bloop/structure"
)

// BuildProc places one procedure's code with the thesis engine, then
// normalizes it at level lvl, and returns it with its file.
func BuildProc(in scopes.Input, b *Bounds, lvl normalize.Level) (*structure.Scope, string) {
	p, file, _ := scopes.ProcHeader(in)
	e := &engine{in: in, bounds: b}
	root := &node{kind: structure.Proc, file: file, begin: p.Line, end: p.Line, estimated: true}
	if in.Sub != nil && in.Sub.Desc != nil {
		if bg, en, ok := b.Region(in.Sub.Desc); ok {
			root = &node{kind: structure.Proc, file: in.Sub.Desc.File, begin: bg, end: en, desc: in.Sub.Desc}
		}
	}
	e.proc = root
	if g, f := in.Graph, in.Forest; g != nil {
		e.first, e.last = make([]*node, len(g.Blocks)), make([]*node, len(g.Blocks))
		var top []int
		for i := range g.Blocks {
			if f.Innermost[i] == nil {
				top = append(top, i)
			}
		}
		e.walk(root, e.items(top, f.Top))
	}
	for _, r := range scopes.Gaps(in) {
		l := e.line(r.Lo)
		c := e.between(r)
		if l.ln != 0 || c == nil {
			c = e.determine(root, l)
		}
		c.add(l, r)
	}
	if recursive(in) {
		recursiveCopies(root)
	}
	p.Children = convert(root)
	normalize.Run(p, lvl, b.Name)
	return p, file
}

// convert turns the construction tree into scopes.
func convert(n *node) []*structure.Scope {
	var out []*structure.Scope
	for k, rs := range n.stmts {
		out = append(out, &structure.Scope{Kind: structure.Stmt, File: k.file, Line: k.ln, Ranges: structure.MergeRanges(rs)})
	}
	for _, k := range n.kids {
		var s *structure.Scope
		if k.kind == structure.Alien {
			line := k.begin
			if line == math.MaxInt {
				line = 0
			}
			s = structure.NewAlien(k.file, k.name, line)
		} else {
			s = &structure.Scope{Kind: structure.Loop, File: k.file, Line: k.begin, Entry: k.entry}
		}
		s.Children = convert(k)
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return order(a) < order(b)
		}
		switch a.Kind {
		case structure.Loop:
			return a.Entry < b.Entry
		case structure.Stmt:
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Ranges[0].Lo < b.Ranges[0].Lo
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.File < b.File
	})
	return out
}

func order(s *structure.Scope) int {
	switch s.Kind {
	case structure.Stmt:
		return 0
	case structure.Alien:
		return 1
	}
	return 2
}

// recursive reports whether the procedure calls itself (or another clone
// of its source procedure): inlined recursion leaves the deepest level as
// a call, and without one nested loops with one header are not copies.
func recursive(in scopes.Input) bool {
	if in.Graph == nil {
		return false
	}
	for _, t := range in.Graph.Calls {
		if in.Func != nil && t == in.Func.Addr {
			return true
		}
		if in.Sub != nil && in.Sub.Desc != nil {
			if sp := in.Img.SubprogramAt(t); sp != nil && sp.Desc == in.Sub.Desc {
				return true
			}
		}
	}
	return false
}
