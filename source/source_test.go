package source

import (
	"reflect"
	"testing"

	"bloop/scopes"
)

func TestScan(t *testing.T) {
	for file, want := range map[string][]int{
		"../testdata/src/loops.c":  {10, 11, 18, 19, 21, 29, 43, 52, 55, 68},
		"../testdata/src/nest.f90": {17, 30, 31, 48, 49, 60},
	} {
		if got := scan(file); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", file, got, want)
		}
	}
}

func TestSnapLoops(t *testing.T) {
	f := &Finder{cache: map[string][]int{"a.f90": {15, 16, 28, 29, 38}}}
	loop := func(line int, kids ...*scopes.Scope) *scopes.Scope {
		return &scopes.Scope{Kind: scopes.Loop, File: "a.f90", Line: line, Children: kids}
	}
	p := &scopes.Scope{Kind: scopes.Proc, Children: []*scopes.Scope{
		loop(17, loop(17)), loop(14), loop(28, loop(30)), loop(39), loop(60),
	}}
	SnapLoops(p, f)
	var got []int
	scopes.Walk(p, func(s *scopes.Scope) {
		if s.Kind == scopes.Loop {
			got = append(got, s.Line)
		}
	})
	if want := []int{15, 16, 14, 28, 29, 38, 60}; !reflect.DeepEqual(got, want) {
		t.Errorf("loop lines %v, want %v", got, want)
	}
}
