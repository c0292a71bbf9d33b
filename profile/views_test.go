package profile

import (
	"fmt"
	"testing"
)

// synthetic builds a profile from hand-made scope paths: main calls
// work (a loop with an inlined helper) from two lines, and rec recurses.
func synthetic() *Profile {
	p := &Profile{Root: &Node{Label: "<program>"}, Threads: map[uint32]*Node{}, Reasons: map[string]uint64{}}
	mainP := &Elem{Kind: ElemProc, Name: "main", Module: "prog", File: "m.c", Line: 1}
	workP := &Elem{Kind: ElemProc, Name: "work", Module: "prog", File: "w.c", Line: 10}
	recP := &Elem{Kind: ElemProc, Name: "rec", Module: "prog", File: "r.c", Line: 30}
	loop := &Elem{Kind: ElemLoop, File: "w.c", Line: 12}
	inl := &Elem{Kind: ElemInline, Name: "helper", File: "h.h", Line: 3, CallFile: "w.c", CallLine: 13}
	call5 := &Elem{Kind: ElemStmt, File: "m.c", Line: 5}
	call6 := &Elem{Kind: ElemStmt, File: "m.c", Line: 6}
	call7 := &Elem{Kind: ElemStmt, File: "m.c", Line: 7}
	s4 := &Elem{Kind: ElemStmt, File: "h.h", Line: 4}
	s11 := &Elem{Kind: ElemStmt, File: "w.c", Line: 11}
	s13 := &Elem{Kind: ElemStmt, File: "w.c", Line: 13}
	s31 := &Elem{Kind: ElemStmt, File: "r.c", Line: 31}
	s32 := &Elem{Kind: ElemStmt, File: "r.c", Line: 32}
	add := func(n int, tid uint32, path ...*Elem) {
		for i := 0; i < n; i++ {
			p.InsertScopes(tid, path, 0, 1)
			p.Samples++
		}
	}
	add(6, 1, mainP, call5, workP, loop, inl, s4) // 6 in the inlined helper in the loop
	add(2, 1, mainP, call6, workP, loop, s11)     // 2 in the loop itself, called from line 6
	add(1, 1, mainP, call6, workP, s13)           // 1 in work outside its loop
	add(1, 2, mainP, s11)                         // 1 in main (another thread)
	add(1, 1, mainP, call7, recP, s32, recP, s32, recP, s31)
	return p
}

// scopeKey names a scope for comparing views: the scope, or for a line
// its file and line (the views split lines differently by context).
func scopeKey(e *Elem) any {
	if e.Kind == ElemStmt {
		return fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	return e
}

// checkExclConsistent requires every view to give each scope the same
// excl: the sum over its top-down contexts, its flat entry, its first
// level bottom-up; and the excl of all scopes to add up to the samples.
func checkExclConsistent(t *testing.T, p *Profile) {
	t.Helper()
	for _, lines := range []bool{false, true} {
		top := map[any]uint64{}
		var total uint64
		var walk func(n *Node)
		walk = func(n *Node) {
			total += n.Excl
			if n.Elem != nil {
				top[scopeKey(n.Elem)] += n.Excl
			}
			for _, c := range n.Children {
				walk(c)
			}
		}
		walk(viewTree(p.Root, lines))
		if total != p.Samples {
			t.Errorf("lines %v: top-down excl adds up to %d, want the %d samples", lines, total, p.Samples)
		}
		flat := map[any]uint64{}
		for _, fe := range p.Flat(lines) {
			flat[scopeKey(fe.Elem)] += fe.Excl
		}
		bottom := map[any]uint64{}
		for _, c := range viewTree(p.BottomUp(lines), lines).Children {
			bottom[scopeKey(c.Elem)] += c.Excl
		}
		for _, m := range []map[any]uint64{flat, bottom} {
			for k := range m {
				if _, ok := top[k]; !ok {
					top[k] = 0
				}
			}
		}
		for k, v := range top {
			if flat[k] != v || bottom[k] != v {
				t.Errorf("lines %v: %v: excl %d top-down, %d flat, %d bottom-up", lines, k, v, flat[k], bottom[k])
			}
		}
	}
}

func TestExclConsistent(t *testing.T) {
	checkExclConsistent(t, synthetic())
}
