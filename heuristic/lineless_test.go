package heuristic

import (
	"testing"

	"bloop/cfg"
	"bloop/isa"
	"bloop/loader"
	"bloop/scopes"
	"bloop/structure"
)

// graph builds a graph of one-instruction blocks [start, start+4), with
// the given successors; predecessors follow.
func graph(starts []uint64, kinds []isa.Kind, succs [][]int) *cfg.Graph {
	g := &cfg.Graph{}
	for i, s := range starts {
		g.Blocks = append(g.Blocks, &cfg.Block{Start: s, End: s + 4, Insts: []cfg.Inst{{Inst: isa.Inst{Addr: s, Len: 4, Kind: kinds[i]}}}, Succs: succs[i]})
	}
	for i, b := range g.Blocks {
		for _, s := range b.Succs {
			g.Blocks[s].Preds = append(g.Blocks[s].Preds, i)
		}
	}
	return g
}

// TestContinued: line-0 code at the top of a block continues the inlined
// code before it only when the layout and every way in say so.
func TestContinued(t *testing.T) {
	p := &loader.Descriptor{Name: "p", File: "m.cc", Line: 10}
	f := &loader.Descriptor{Name: "f", File: "h.h", Line: 100}
	g := &loader.Descriptor{Name: "g", File: "h.h", Line: 200}
	bounds := NewBounds(&loader.Image{Descriptors: []*loader.Descriptor{p, f, g}})
	row := func(a uint64, file string, ln int) loader.LineRow {
		return loader.LineRow{Addr: a, End: a + 4, File: file, Line: ln}
	}
	// Block 1 at 0x14 has line 0 in h.h; block 0 before it is f's code.
	for _, c := range []struct {
		name  string
		rows  []loader.LineRow
		kinds []isa.Kind
		succs [][]int
		want  line
	}{
		{"falls through inside f", []loader.LineRow{row(0x10, "h.h", 101), row(0x14, "h.h", 0), row(0x18, "h.h", 102)},
			[]isa.Kind{isa.CondJump, isa.Other, isa.Return}, [][]int{{1, 2}, {2}, nil}, line{"h.h", 101}},
		{"f's code calls g after it", []loader.LineRow{row(0x10, "h.h", 101), row(0x14, "h.h", 0), row(0x18, "x.h", 7)},
			[]isa.Kind{isa.CondJump, isa.Other, isa.Return}, [][]int{{1, 2}, {2}, nil}, line{"h.h", 101}},
		{"entered by a jump", []loader.LineRow{row(0x10, "h.h", 101), row(0x14, "h.h", 0), row(0x18, "h.h", 102)},
			[]isa.Kind{isa.Jump, isa.Other, isa.CondJump}, [][]int{{2}, {2}, {1, 0}}, line{}},
		{"the procedure's own code follows", []loader.LineRow{row(0x10, "h.h", 101), row(0x14, "h.h", 0), row(0x18, "m.cc", 12)},
			[]isa.Kind{isa.CondJump, isa.Other, isa.Return}, [][]int{{1, 2}, {2}, nil}, line{}},
		{"another way in leaves g's code", []loader.LineRow{row(0x10, "h.h", 101), row(0x14, "h.h", 0), row(0x18, "h.h", 201)},
			[]isa.Kind{isa.CondJump, isa.Other, isa.CondJump}, [][]int{{1, 2}, {2}, {1, 0}}, line{}},
		{"the row's file is not the code before's", []loader.LineRow{row(0x10, "h.h", 101), row(0x14, "x.h", 0), row(0x18, "h.h", 102)},
			[]isa.Kind{isa.CondJump, isa.Other, isa.Return}, [][]int{{1, 2}, {2}, nil}, line{}},
		{"a line of its own", []loader.LineRow{row(0x10, "h.h", 101), row(0x14, "h.h", 103), row(0x18, "h.h", 102)},
			[]isa.Kind{isa.CondJump, isa.Other, isa.Return}, [][]int{{1, 2}, {2}, nil}, line{}},
	} {
		img := &loader.Image{Lines: loader.NewLineTable(c.rows)}
		e := &engine{
			in:     scopes.Input{Img: img, Graph: graph([]uint64{0x10, 0x14, 0x18}, c.kinds, c.succs)},
			bounds: bounds,
			proc:   &node{kind: structure.Proc, file: "m.cc", desc: p, begin: 10, end: 10},
		}
		if got := e.continued(1); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestBetween: padding between two pieces of one inlined call goes to its
// alien context, never into a loop on its own.
func TestBetween(t *testing.T) {
	root := &node{kind: structure.Proc, file: "m.cc"}
	loop := &node{kind: structure.Loop, file: "m.cc"}
	a1 := &node{kind: structure.Alien, file: "h.h"}
	a2 := &node{kind: structure.Alien, file: "h.h"}
	inner := &node{kind: structure.Loop, file: "h.h"}
	adopt(root, adopt(loop, adopt(a1, inner), a2))
	g := graph([]uint64{0x10, 0x20}, []isa.Kind{isa.Jump, isa.Return}, [][]int{{1}, nil})
	pad := structure.Range{Lo: 0x14, Hi: 0x20}
	for _, c := range []struct {
		name          string
		before, after *node
		want          *node
	}{
		{"inside one inlined call", a1, inner, a1},
		{"two inlined calls", a1, a2, nil},
		{"native code of a loop", loop, loop, nil},
		{"from native code into an inlined call", root, a1, nil},
	} {
		e := &engine{in: scopes.Input{Graph: g}, first: []*node{nil, c.after}, last: []*node{c.before, nil}}
		if got := e.between(pad); got != c.want {
			t.Errorf("%s: %p, want %p", c.name, got, c.want)
		}
	}
}
