package profile

import (
	"fmt"
	"sort"
	"strings"
)

// The trees and entries the views show, derived from the calling-context
// tree: one implementation for the text views (package report) and the
// HTML pages (package view).

// viewTree drops the statement nodes unless lines are wanted, merging the
// scopes below statements of one context (calls from several lines); a
// dropped line's samples become its scope's own (excl).
func viewTree(n *Node, lines bool) *Node {
	if lines {
		return n
	}
	out := &Node{Elem: n.Elem, Label: n.Label}
	out.addVals(n.Incl, n.Excl, n.EvIncl, n.EvExcl)
	levels := 1
	var add func(c *Node)
	add = func(c *Node) {
		if c.Elem != nil && c.Elem == n.Elem && n.Elem.Kind == ElemProc {
			// Direct recursion: fold the callee into this node.
			levels++
			out.addVals(0, c.Excl, nil, c.EvExcl)
			for _, g := range c.Children {
				add(g)
			}
			return
		}
		if c.Elem != nil && c.Elem.Kind == ElemStmt {
			out.addVals(0, c.Excl, nil, c.EvExcl)
			for _, g := range c.Children {
				add(g)
			}
			return
		}
		out.adopt(viewTree(c, lines))
	}
	for _, c := range n.Children {
		add(c)
	}
	if levels > 1 {
		out.Label = fmt.Sprintf("%s (recursion, up to %d levels)", out.Label, levels)
	}
	return out
}

// merge adds the counts and children of b to a (same scope).
func merge(a, b *Node) {
	a.addVals(b.Incl, b.Excl, b.EvIncl, b.EvExcl)
	for _, c := range b.Children {
		a.adopt(c)
	}
}

// moduleSuffix names the load module of a procedure, unless its name
// already does (structure files name the module of unsymbolized code).
func moduleSuffix(e *Elem) string {
	if e.Kind != ElemProc || e.Module == "" {
		return ""
	}
	m := e.Module
	if !strings.HasPrefix(m, "[") {
		m = "[" + m + "]"
	}
	if strings.Contains(e.Name, m) {
		return ""
	}
	return "  " + m
}

// sorted orders nodes by inclusive samples, then label.
func sorted(ns []*Node) []*Node {
	out := append([]*Node(nil), ns...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Incl != out[j].Incl {
			return out[i].Incl > out[j].Incl
		}
		return out[i].Label < out[j].Label
	})
	return out
}

// BottomUp builds the top-down tree inverted: its first level is each
// sample's innermost scope (a loop, inlined call or procedure; with lines,
// a line), below it the scopes enclosing it and the callers it was reached
// through, outward. So a scope's excl is the same as in the other views.
func (p *Profile) BottomUp(lines bool) *Node {
	root := &Node{Label: "<program>"}
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.hasExcl() {
			root.addVals(n.Excl, 0, n.EvExcl, nil)
			cur := root
			for a := n; a != nil && a.Elem != nil; a = a.Parent {
				if a.Elem.Kind == ElemStmt && !lines {
					continue
				}
				cur = cur.child(a.Elem)
				cur.addVals(n.Excl, 0, n.EvExcl, nil)
				if cur.Parent == root {
					cur.addVals(0, n.Excl, nil, n.EvExcl) // the innermost scope
				}
			}
			if cur == root {
				root.addVals(0, n.Excl, nil, n.EvExcl) // a sample without scopes
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(p.Root)
	return root
}

// FlatEntry is one static scope with its samples over all contexts.
type FlatEntry struct {
	Elem *Elem
	// Proc is, for loops and inlined code, the enclosing procedure; for a
	// line, the function (procedure or inlined) whose code it is.
	Proc           string
	Incl, Excl     uint64
	EvIncl, EvExcl []uint64 // every event's, as in Node
}

// flatKey identifies a flat entry: a scope, or a line of a function (the
// structure has one statement scope per line and loop, the view one entry).
type flatKey struct {
	elem *Elem
	fn   *Elem
	file string
	line int
}

// Flat aggregates samples by static scope (procedures, inlined
// procedures and loops as peers; with lines, source lines too): incl
// counts each scope once per sample that has it on its path, excl the
// samples whose innermost scope it is.
func (p *Profile) Flat(lines bool) []FlatEntry {
	acc := map[flatKey]*FlatEntry{}
	var order []*FlatEntry // first met first: ties keep one order
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.hasExcl() {
			seen := map[flatKey]bool{}
			innermost := true
			for a := n; a != nil && a.Elem != nil; a = a.Parent {
				if a.Elem.Kind == ElemStmt && !lines {
					continue
				}
				k, owner := flatKeyOf(a)
				fe := acc[k]
				if fe == nil {
					fe = &FlatEntry{Elem: a.Elem, Proc: owner}
					acc[k] = fe
					order = append(order, fe)
				}
				if !seen[k] {
					seen[k] = true
					fe.Incl += n.Excl
					fe.EvIncl = addVec(fe.EvIncl, n.EvExcl)
				}
				if innermost {
					fe.Excl += n.Excl
					fe.EvExcl = addVec(fe.EvExcl, n.EvExcl)
					innermost = false
				}
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(p.Root)
	out := make([]FlatEntry, 0, len(order))
	for _, fe := range order {
		out = append(out, *fe)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Incl != b.Incl {
			return a.Incl > b.Incl
		}
		if a.Elem.Kind != b.Elem.Kind {
			return a.Elem.Kind < b.Elem.Kind
		}
		if a.Elem.Label() != b.Elem.Label() {
			return a.Elem.Label() < b.Elem.Label()
		}
		return a.Proc < b.Proc
	})
	return out
}

// flatKeyOf returns the flat entry of node a and the name the view shows
// it in: the enclosing procedure of a loop or inlined call, the function
// of a line.
func flatKeyOf(a *Node) (flatKey, string) {
	e := a.Elem
	if e.Kind == ElemProc {
		return flatKey{elem: e}, ""
	}
	for q := a.Parent; q != nil && q.Elem != nil; q = q.Parent {
		switch k := q.Elem.Kind; {
		case e.Kind == ElemStmt && (k == ElemProc || k == ElemInline):
			return flatKey{fn: q.Elem, file: e.File, line: e.Line}, q.Elem.Name
		case e.Kind != ElemStmt && k == ElemProc:
			return flatKey{elem: e}, q.Elem.Name
		}
	}
	if e.Kind == ElemStmt {
		return flatKey{file: e.File, line: e.Line}, ""
	}
	return flatKey{elem: e}, ""
}

// hasExcl reports whether samples of any event end at n.
func (n *Node) hasExcl() bool {
	if n.Excl > 0 {
		return true
	}
	for _, v := range n.EvExcl {
		if v > 0 {
			return true
		}
	}
	return false
}
