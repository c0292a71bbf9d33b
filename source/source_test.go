package source

import (
	"reflect"
	"strings"
	"testing"

	"bloop/structure"
)

func TestScan(t *testing.T) {
	for _, c := range []struct {
		file  string
		lines []int
		tails map[int]int
	}{
		{"../testdata/src/loops.c", []int{10, 11, 18, 19, 21, 29, 43, 52, 68}, map[int]int{55: 52}},
		{"../testdata/src/nest.f90", []int{17, 30, 31, 48, 49, 60}, nil},
	} {
		got := scan(c.file)
		if !reflect.DeepEqual(got.lines, c.lines) || len(c.tails) > 0 && !reflect.DeepEqual(got.tails, c.tails) {
			t.Errorf("%s: %v %v, want %v %v", c.file, got.lines, got.tails, c.lines, c.tails)
		}
	}
}

func TestCLoops(t *testing.T) {
	for _, c := range []struct {
		name, src string
		lines     []int
		tails     map[int]int
	}{
		{"do-while with braces", "do {\n  x++;\n} while (x < 9);\n", []int{1}, map[int]int{3: 1}},
		{"do-while without braces", "do x++;\nwhile (x < 9);\n", []int{1}, map[int]int{2: 1}},
		{"while inside a do body", "do {\n  while (y) y--;\n} while (x);\n", []int{1, 2}, map[int]int{3: 1}},
		{"nested do-whiles", "do {\n do {\n } while (a);\n} while (b);\n", []int{1, 2}, map[int]int{3: 2, 4: 1}},
		{"empty-bodied while", "while (*p++)\n  ;\nfor (;;) {}\n", []int{1, 3}, map[int]int{}},
		{"comments, strings, macros", "// for (\n/* while */ s = \"do\";\n#define L(n) \\\n  for (i = 0; i < n; i++)\nfor (;;) {}\n", []int{5}, map[int]int{}},
		{"identifiers are not keywords", "do_it(); fork(); whilex = 1;\n", nil, map[int]int{}},
	} {
		got := cLoops(strings.NewReader(c.src))
		if !reflect.DeepEqual(got.lines, c.lines) || !reflect.DeepEqual(got.tails, c.tails) {
			t.Errorf("%s: lines %v tails %v, want %v %v", c.name, got.lines, got.tails, c.lines, c.tails)
		}
	}
}

func TestSnapLoops(t *testing.T) {
	f := &Finder{cache: map[string]*loops{"a.f90": {lines: []int{15, 16, 28, 29, 38}}, "a.c": {lines: []int{3}, tails: map[int]int{20: 3}}}}
	loop := func(line int, kids ...*structure.Scope) *structure.Scope {
		return &structure.Scope{Kind: structure.Loop, File: "a.f90", Line: line, Children: kids}
	}
	p := &structure.Scope{Kind: structure.Proc, Children: []*structure.Scope{
		loop(17, loop(17)), loop(14), loop(28, loop(30)), loop(39), loop(60),
		{Kind: structure.Loop, File: "a.c", Line: 20}, // a do-while 17 lines long
	}}
	SnapLoops(p, f)
	var got []int
	structure.Walk(p, func(s *structure.Scope) {
		if s.Kind == structure.Loop {
			got = append(got, s.Line)
		}
	})
	if want := []int{15, 16, 14, 28, 29, 38, 60, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("loop lines %v, want %v", got, want)
	}
}
