package heuristic

import (
	"testing"

	"bloop/cfg"
	"bloop/havlak"
	"bloop/isa"
	"bloop/loader"
	"bloop/scopes"
	"bloop/structure"
)

// loopNode builds a loop with header h in file f and statements at lines.
func loopNode(f string, h int, lines ...int) *node {
	n := &node{kind: structure.Loop, file: f, begin: h, end: h, header: line{f, h}, stmts: map[line][]structure.Range{}}
	for i, l := range lines {
		n.add(line{f, l}, structure.Range{Lo: uint64(100*h + i), Hi: uint64(100*h + i + 1)})
	}
	return n
}

func adopt(parent *node, kids ...*node) *node {
	for _, k := range kids {
		k.parent = parent
		parent.kids = append(parent.kids, k)
	}
	return parent
}

// TestRecursiveCopies: a loop nested in a loop with the same header that
// repeats a body line is the procedure inlined into itself; loops that only
// share their exit test line stay native.
func TestRecursiveCopies(t *testing.T) {
	d := &loader.Descriptor{Name: "erase", File: "t.h", Line: 1929}
	cases := []struct {
		name  string
		build func() (root, inner *node)
		wrap  bool
	}{
		{"self-inlined recursion", func() (*node, *node) {
			outer, inner := loopNode("t.h", 1933, 1933, 1938), loopNode("t.h", 1933, 1933, 1938)
			return adopt(&node{kind: structure.Proc, file: "t.h", desc: d}, adopt(outer, inner)), inner
		}, true},
		{"state machine: shared exit test only", func() (*node, *node) {
			outer, inner := loopNode("s.c", 31, 27, 28), loopNode("s.c", 31, 31, 33, 34)
			return adopt(&node{kind: structure.Proc, file: "s.c"}, adopt(outer, inner)), inner
		}, false},
		{"different headers", func() (*node, *node) {
			outer, inner := loopNode("s.c", 10, 10, 12), loopNode("s.c", 11, 11, 12)
			return adopt(&node{kind: structure.Proc, file: "s.c"}, adopt(outer, inner)), inner
		}, false},
		{"inside an inlined callee: its region is unknown", func() (*node, *node) {
			outer, inner := loopNode("t.h", 1933, 1933, 1938), loopNode("t.h", 1933, 1933, 1938)
			a := adopt(&node{kind: structure.Alien, file: "t.h"}, adopt(outer, inner))
			return adopt(&node{kind: structure.Proc, file: "m.c"}, a), inner
		}, false},
	}
	for _, c := range cases {
		root, inner := c.build()
		outer := inner.parent
		recursiveCopies(root)
		a := inner.parent
		wrapped := a != outer && a.kind == structure.Alien && a.parent == outer
		if wrapped != c.wrap {
			t.Errorf("%s: wrapped %v, want %v", c.name, wrapped, c.wrap)
			continue
		}
		if wrapped && (a.file != "t.h" || a.name != "erase" || a.begin != 1933 || len(a.kids) != 1) {
			t.Errorf("%s: alien %+v, want the procedure's own file and name at the header line", c.name, a)
		}
	}
}

// TestRecursiveCopiesChain: each level of a recursion inlined several
// times deep gets its own alien context, nested like the calls.
func TestRecursiveCopiesChain(t *testing.T) {
	d := &loader.Descriptor{Name: "erase", File: "t.h", Line: 1929}
	root := &node{kind: structure.Proc, file: "t.h", desc: d}
	l1, l2, l3 := loopNode("t.h", 1933, 1938), loopNode("t.h", 1933, 1938), loopNode("t.h", 1933, 1938)
	adopt(root, adopt(l1, adopt(l2, l3)))
	recursiveCopies(root)
	depth := 0
	for x := l3; x != root; x = x.parent {
		if x.kind == structure.Alien {
			depth++
		}
	}
	if depth != 2 {
		t.Errorf("l3 under %d alien contexts, want 2", depth)
	}
}

// TestLambdaFirstLine: the line a lambda begins on also holds its
// procedure's code (the closure object is built there), except inside an
// inlined call, where it is the lambda's body; the lambda's other lines
// are its own.
func TestLambdaFirstLine(t *testing.T) {
	mainD := &loader.Descriptor{Name: "main", File: "m.cc", Line: 10}
	lam := &loader.Descriptor{Name: "operator()", File: "m.cc", Line: 14, Parent: mainD, Member: true, Lambda: true}
	b := NewBounds(&loader.Image{Descriptors: []*loader.Descriptor{mainD, lam}})
	e := &engine{bounds: b}
	for _, c := range []struct {
		desc     *loader.Descriptor
		line     int
		inCallee bool
		want     bool
	}{
		{mainD, 12, false, true}, {mainD, 14, false, true}, {mainD, 15, false, false}, {mainD, 30, false, true},
		{mainD, 14, true, false}, {mainD, 12, true, true},
		{lam, 14, false, true}, {lam, 15, false, true}, {lam, 12, false, false}, {lam, 14, true, true},
	} {
		e.inCallee = c.inCallee
		n := &node{kind: structure.Proc, file: "m.cc", desc: c.desc, begin: c.desc.Line, end: c.desc.Line}
		if got := e.matches(n, line{"m.cc", c.line}); got != c.want {
			t.Errorf("%s matches line %d (in a callee: %v): %v, want %v", c.desc.Name, c.line, c.inCallee, got, c.want)
		}
	}
}

// TestRecursive: only a procedure that calls itself can hold copies of
// itself.
func TestRecursive(t *testing.T) {
	f := &loader.Func{Name: "f", Addr: 0x100}
	for _, c := range []struct {
		calls []uint64
		want  bool
	}{{nil, false}, {[]uint64{0x200}, false}, {[]uint64{0x80, 0x100}, true}} {
		in := scopes.Input{Img: &loader.Image{}, Func: f, Graph: &cfg.Graph{Calls: c.calls}}
		if got := recursive(in); got != c.want {
			t.Errorf("calls %x: recursive %v, want %v", c.calls, got, c.want)
		}
	}
}

// TestLoopInvariant2: a loop does not grow over its siblings' lines, but
// keeps the code; within the tolerance it grows as before.
func TestLoopInvariant2(t *testing.T) {
	proc := &node{kind: structure.Proc, file: "a.c", begin: 1, end: 100}
	x := loopNode("a.c", 10, 10, 12)
	x.end = 14
	y := loopNode("a.c", 17)
	z := loopNode("a.c", 30)
	adopt(proc, x, y, z)
	e := &engine{}
	for _, c := range []struct {
		ln         int
		ok         bool
		begin, end int
	}{
		{14, true, 17, 17}, // inside x: kept, y does not grow
		{15, true, 15, 17}, // between x and y: y grows up
		{31, true, 15, 17}, // inside z: kept, no growth
		{25, true, 15, 25},
		{9, false, 15, 25}, // beyond the begin tolerance
	} {
		ok := e.matches(y, line{"a.c", c.ln})
		if ok != c.ok || y.begin != c.begin || y.end != c.end {
			t.Errorf("line %d: matches %v, bounds [%d,%d]; want %v, [%d,%d]", c.ln, ok, y.begin, y.end, c.ok, c.begin, c.end)
		}
	}
}

// TestHeaderEnters: in code without lines, an irreducible region that a
// loop's header block enters (here through an alignment nop block) is the
// loop's own body; a region entered only from inside the body is a loop
// of its own. The shape is aarch64 stl-gcc12-O3's window_max_sum: a
// deque::push_back at the top of the for loop whose slow path comes back
// into its fast path, and the while loop after it.
func TestHeaderEnters(t *testing.T) {
	// 0 entry, 1 the for loop's header, 2 a nop, 3 the push (the region's
	// first entry), 4 the region's second entry (where the slow push 8
	// comes back), 5 and 6 the while loop, 7 a block of its body, 9 the
	// exit.
	succs := [][]int{{1}, {2, 8}, {3}, {4}, {5, 1}, {6, 3}, {5, 7, 1}, {6}, {4, 9}, {}}
	starts := []uint64{0, 4, 8, 12, 16, 20, 24, 28, 32, 36}
	kinds := make([]isa.Kind, len(starts))
	g := graph(starts, kinds, succs)
	f := havlak.Find(len(succs), 0, succs)
	var h *havlak.Loop
	for _, l := range f.Loops {
		if l.Header == 1 {
			h = l
		}
	}
	if h == nil || len(h.Children) == 0 {
		t.Fatalf("no loop at the header with nested loops: %+v", f.Loops)
	}
	entered := map[int]bool{}
	for _, l := range f.Loops {
		if l != h {
			entered[l.Header] = headerEnters(g, h.Header, scopes.ShapeOf(g, l))
		}
	}
	region := h.Children[0]
	if !region.Irreducible || !entered[region.Header] {
		t.Errorf("region at %d (irreducible %v): entered %v, want an irreducible region the header enters", region.Header, region.Irreducible, entered[region.Header])
	}
	for hdr, e := range entered {
		if hdr != region.Header && e {
			t.Errorf("loop at %d: the header enters it, want only the region", hdr)
		}
	}
}
