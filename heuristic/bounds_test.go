package heuristic

import (
	"math"
	"testing"

	"bloop/loader"
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
