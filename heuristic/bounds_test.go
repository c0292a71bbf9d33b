package heuristic

import (
	"math"
	"testing"

	"bloop/loader"
	"bloop/structure"
)

func TestBounds(t *testing.T) {
	mainP := &loader.Descriptor{Name: "main", File: "a.f90", Line: 2}
	fill := &loader.Descriptor{Name: "fill", File: "a.f90", Line: 42, Parent: mainP}
	total := &loader.Descriptor{Name: "total", File: "a.f90", Line: 56, Parent: mainP}
	f := &loader.Descriptor{Name: "f", File: "b.cc", Line: 10}
	fInt := &loader.Descriptor{Name: "f<int>", File: "b.cc", Line: 10}
	g := &loader.Descriptor{Name: "g", File: "b.cc", Line: 30}
	m1 := &loader.Descriptor{Name: "m1", File: "b.cc", Line: 33, Parent: g, Member: true}
	m2 := &loader.Descriptor{Name: "m2", File: "b.cc", Line: 36, Parent: g, Member: true}
	h := &loader.Descriptor{Name: "h", File: "b.cc", Line: 50}
	l1 := &loader.Descriptor{Name: "operator()", File: "b.cc", Line: 52, Parent: h, Member: true, Lambda: true}
	l2 := &loader.Descriptor{Name: "operator()", File: "b.cc", Line: 55, Parent: l1, Member: true, Lambda: true}
	img := &loader.Image{Descriptors: []*loader.Descriptor{mainP, fill, total, f, fInt, g, m1, m2, h, l1, l2}}
	b := NewBounds(img)
	for _, c := range []struct {
		d          *loader.Descriptor
		begin, end int
	}{
		{mainP, 2, math.MaxInt}, // the program contains its internal procedures
		{fill, 42, 55},          // Procedure Invariant 2: ends before its sibling
		{total, 56, math.MaxInt},
		{f, 10, 29}, {fInt, 10, 29}, // a template and its instance share a region
		{m1, 33, 35},
		{m2, 36, 41}, // a member of a procedure-scoped class: memberTol lines
		{g, 30, 49},
		{l2, 55, 60},
		{l1, 52, 60}, // a lambda holds the lambda nested in it
	} {
		bg, en, ok := b.Region(c.d)
		if !ok || bg != c.begin || en != c.end {
			t.Errorf("%s: [%d,%d], want [%d,%d]", c.d.Name, bg, en, c.begin, c.end)
		}
	}
	for _, c := range []struct {
		file string
		line int
		want string
	}{
		{"a.f90", 10, "main"}, {"a.f90", 47, "fill"}, {"a.f90", 60, "total"},
		{"b.cc", 12, "f<int>"}, {"b.cc", 34, "m1"}, {"b.cc", 45, "g"}, {"b.cc", 5, ""}, {"c.c", 1, ""},
	} {
		if got := b.Name(c.file, c.line); got != c.want {
			t.Errorf("Name(%s:%d) = %q, want %q", c.file, c.line, got, c.want)
		}
	}
}

// TestMemberLines: a lambda without an out-of-line copy is bounded by the
// lines its copies inlined outside its parent have, within memberTol.
func TestMemberLines(t *testing.T) {
	h := &loader.Descriptor{Name: "h", File: "b.cc", Line: 50}
	l1 := &loader.Descriptor{Name: "operator()", File: "b.cc", Line: 52, Parent: h, Member: true, Lambda: true}
	k := &loader.Descriptor{Name: "k", File: "b.cc", Line: 70}
	l2 := &loader.Descriptor{Name: "operator()", File: "b.cc", Line: 72, Parent: k, Member: true, Lambda: true}
	m := &loader.Descriptor{Name: "m", File: "b.cc", Line: 90}
	l3 := &loader.Descriptor{Name: "operator()", File: "b.cc", Line: 91, Parent: m, Member: true, Lambda: true}
	alg := &loader.Descriptor{Name: "alg", File: "a.h", Line: 10, HasCode: true}
	rows := []loader.LineRow{
		// h, with l1 inlined, and the line after the lambda
		{Addr: 0x100, End: 0x104, File: "b.cc", Line: 51},
		{Addr: 0x104, End: 0x108, File: "b.cc", Line: 52},
		{Addr: 0x108, End: 0x10c, File: "b.cc", Line: 54},
		// alg instantiated for l1: l1's lines only
		{Addr: 0x200, End: 0x204, File: "a.h", Line: 11},
		{Addr: 0x204, End: 0x208, File: "b.cc", Line: 52},
		{Addr: 0x208, End: 0x20c, File: "b.cc", Line: 53},
		// k, with l2 inlined: nothing outside k
		{Addr: 0x300, End: 0x304, File: "b.cc", Line: 73},
		// alg with m inlined: m's line 94 comes too
		{Addr: 0x400, End: 0x404, File: "b.cc", Line: 91},
		{Addr: 0x404, End: 0x408, File: "b.cc", Line: 94},
	}
	img := &loader.Image{
		Descriptors: []*loader.Descriptor{h, l1, k, l2, m, l3, alg},
		Lines:       loader.NewLineTable(rows),
		Procs: []*loader.Subprogram{
			{Name: "h", Ranges: []structure.Range{{Lo: 0x100, Hi: 0x10c}}, Desc: h},
			{Name: "alg", Ranges: []structure.Range{{Lo: 0x200, Hi: 0x20c}}, Desc: alg},
			{Name: "k", Ranges: []structure.Range{{Lo: 0x300, Hi: 0x304}}, Desc: k},
			{Name: "alg", Ranges: []structure.Range{{Lo: 0x400, Hi: 0x408}}, Desc: alg},
		},
	}
	b := NewBounds(img)
	for _, c := range []struct {
		d          *loader.Descriptor
		begin, end int
	}{
		{l1, 52, 53}, // its lines in alg, not h's line 54
		{l2, 72, 77}, // no code outside k: memberTol lines
		{l3, 91, 94}, // m inlined with it: m's lines, within memberTol
	} {
		bg, en, ok := b.Region(c.d)
		if !ok || bg != c.begin || en != c.end {
			t.Errorf("%s at %d: [%d,%d], want [%d,%d]", c.d.Name, c.d.Line, bg, en, c.begin, c.end)
		}
	}
}
