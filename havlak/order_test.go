package havlak

import (
	"fmt"
	"strings"
	"testing"
)

// stateMachine is irred-gcc12-O0's state_machine (two states written with
// gotos, entered at either): blocks 0x1247 (0) to 0x12f0 (13), each
// conditional branch's successors listed fall-through first, as Dyninst
// links them (cfg.Graph.DyninstSuccs).
var stateMachine = [][]int{
	0: {1, 2}, 1: {9}, 2: {4}, 3: {4}, 4: {5, 6}, 5: {13}, 6: {7, 8}, 7: {4}, 8: {9},
	9: {10, 11}, 10: {13}, 11: {12, 3}, 12: {9}, 13: nil,
}

func nest(f *Forest) string {
	var b strings.Builder
	var walk func(l *Loop)
	walk = func(l *Loop) {
		fmt.Fprintf(&b, "(%d irr=%v %v", l.Header, l.Irreducible, l.Nodes)
		for _, c := range l.Children {
			walk(c)
		}
		b.WriteString(")")
	}
	for _, l := range f.Top {
		walk(l)
	}
	return b.String()
}

// TestSuccessorOrder pins that an irreducible nest depends on the order
// the search takes successors in: fall-through first (Dyninst's order,
// whose loop analysis, Wei, Mao, Zou and Chen's, builds the same forest
// for a given order), state_b's loop (header 9) holds state_a's (4), as in
// hpcstruct's output; taken branch first, the other way round.
func TestSuccessorOrder(t *testing.T) {
	if got, want := nest(Find(len(stateMachine), 0, stateMachine)), "(9 irr=true [3 8 9 11 12](4 irr=false [4 6 7]))"; got != want {
		t.Errorf("fall-through first:\n got %s\nwant %s", got, want)
	}
	taken := make([][]int, len(stateMachine))
	for v, s := range stateMachine {
		taken[v] = s
		if len(s) == 2 {
			taken[v] = []int{s[1], s[0]}
		}
	}
	if got, want := nest(Find(len(taken), 0, taken)), "(4 irr=true [3 4 6 7 8](9 irr=false [9 11 12]))"; got != want {
		t.Errorf("taken first:\n got %s\nwant %s", got, want)
	}
}
