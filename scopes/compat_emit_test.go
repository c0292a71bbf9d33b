package scopes

import (
	"slices"
	"testing"

	"bloop/structure"
)

// TestCalleeFileLineZero: with hpcstruct's ranks (compat mode), an inlined
// callee without nested calls or loops takes the file of its
// lowest-addressed statement even when that row has line 0 (clang's
// _Iter_less_iter::operator() in stl-clang14-O2: stl_algo.h, not the
// predefined_ops.h of its first lined row); the other modes take the
// lowest lined statement's file.
func TestCalleeFileLineZero(t *testing.T) {
	n := newNode()
	n.stmts[stmtKey{"stl_algo.h", 0}] = []structure.Range{{Lo: 0x3af9, Hi: 0x3afd}}
	n.stmts[stmtKey{"predefined_ops.h", 45}] = []structure.Range{{Lo: 0x3afd, Hi: 0x3b0d}}
	if got := calleeFileOf(n, map[string]int{}); got != "stl_algo.h" {
		t.Errorf("compat: %s, want stl_algo.h", got)
	}
	if got := calleeFileOf(n, nil); got != "predefined_ops.h" {
		t.Errorf("default: %s, want predefined_ops.h", got)
	}
}

// TestLineZeroLoopNotForeign: in compat mode a loop whose header line is 0
// stays in its context even when its file is another (clang's stl_heap.h
// loops in __make_heap, a procedure of stl_iterator.h, stl-clang14-O3);
// the other modes guard it as foreign code, as they guard a lined loop.
func TestLineZeroLoopNotForeign(t *testing.T) {
	for _, tc := range []struct {
		rank  map[string]int
		line  int
		guard bool
	}{
		{map[string]int{}, 0, false},
		{map[string]int{}, 355, true},
		{nil, 0, true},
	} {
		n := newNode()
		body := newNode()
		body.stmts[stmtKey{"stl_heap.h", 355}] = []structure.Range{{Lo: 0x468e, Hi: 0x4693}}
		n.loops = []*loopNode{{file: "stl_heap.h", line: tc.line, entry: 0x468e, body: body}}
		out := emit(n, context{file: "stl_iterator.h", rank: tc.rank})
		if len(out) != 1 {
			t.Fatalf("%d scopes", len(out))
		}
		if guarded := out[0].Kind == structure.Alien; guarded != tc.guard {
			t.Errorf("rank %v, line %d: guarded %v, want %v", tc.rank != nil, tc.line, guarded, tc.guard)
		}
	}
}

// TestGuardByBaseName: hpcstruct keys guard aliens by the file's base
// name and names one by its lowest-addressed statement's file, so in
// libc.so.6's inlined __getcwd_generic (posix/getcwd.c, line 269) line 106
// of the caller's linux/getcwd.c shares one guard with posix/getcwd.c's
// lines 173 to 267, which it gives its line, in the file of line 191
// (the lowest address); the other modes guard each file on its own.
func TestGuardByBaseName(t *testing.T) {
	n := newNode()
	n.stmts[stmtKey{"linux/getcwd.c", 106}] = []structure.Range{{Lo: 0xf918b, Hi: 0xf9199}}
	n.stmts[stmtKey{"posix/getcwd.c", 191}] = []structure.Range{{Lo: 0xf8cfe, Hi: 0xf8d0d}}
	n.stmts[stmtKey{"posix/getcwd.c", 173}] = []structure.Range{{Lo: 0xf8db6, Hi: 0xf8dcb}}
	n.stmts[stmtKey{"posix/getcwd.c", 270}] = []structure.Range{{Lo: 0xf8d8c, Hi: 0xf8db3}}
	type guard struct {
		file  string
		line  int
		stmts int
	}
	for _, tc := range []struct {
		hpcstruct bool
		want      []guard
	}{
		{true, []guard{{"posix/getcwd.c", 106, 3}}},
		{false, []guard{{"linux/getcwd.c", 106, 1}, {"posix/getcwd.c", 173, 2}}},
	} {
		var got []guard
		for _, s := range emit(n, context{file: "posix/getcwd.c", threshold: 269, hpcstruct: tc.hpcstruct}) {
			if s.Kind == structure.Alien {
				got = append(got, guard{s.File, s.Line, len(s.Children)})
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("hpcstruct %v: guards %+v, want %+v", tc.hpcstruct, got, tc.want)
		}
	}
}
