package scopes

import "testing"

// TestCalleeFileLineZero: with hpcstruct's ranks (compat mode), an inlined
// callee without nested calls or loops takes the file of its
// lowest-addressed statement even when that row has line 0 (clang's
// _Iter_less_iter::operator() in stl-clang14-O2: stl_algo.h, not the
// predefined_ops.h of its first lined row); the other modes take the
// lowest lined statement's file.
func TestCalleeFileLineZero(t *testing.T) {
	n := newNode()
	n.stmts[stmtKey{"stl_algo.h", 0}] = []Range{{Lo: 0x3af9, Hi: 0x3afd}}
	n.stmts[stmtKey{"predefined_ops.h", 45}] = []Range{{Lo: 0x3afd, Hi: 0x3b0d}}
	if got := calleeFileOf(n, map[string]int{}); got != "stl_algo.h" {
		t.Errorf("compat: %s, want stl_algo.h", got)
	}
	if got := calleeFileOf(n, nil); got != "predefined_ops.h" {
		t.Errorf("default: %s, want predefined_ops.h", got)
	}
}
