package dyninst

import (
	"slices"
	"testing"

	"bloop/cfg"
	"bloop/loader"
)

// TestSolveReturns: a procedure returns when a way out (a return, an
// unresolved indirect jump, a tail call to a procedure that returns) is
// reachable from its entry through the fall-through of calls to procedures
// that return; the rest, mutual recursion without a base case included,
// never return, as Dyninst's parser finds.
func TestSolveReturns(t *testing.T) {
	const R, N = exitReturns, exitNone
	// proc builds a summary: succs per block, the callee each block's call
	// waits for (-1: none), each block's exit.
	proc := func(succs [][]int, gate, exit []int32) *retSummary {
		s := &retSummary{procShape: &procShape{off: make([]int32, len(succs)+1)}, gate: gate, exit: exit}
		for b, ss := range succs {
			for _, x := range ss {
				s.to = append(s.to, int32(x))
			}
			s.off[b+1] = int32(len(s.to))
		}
		return s
	}
	// callThenRet calls c, then returns.
	callThenRet := func(c int32) *retSummary { return proc([][]int{{1}, nil}, []int32{c, -1}, []int32{N, R}) }
	for _, tc := range []struct {
		name  string
		sums  []*retSummary // nil: a procedure without a summary
		known []bool        // returns of those without one (PLT stubs)
		want  []bool
	}{
		{
			name: "a fatal() that calls exit never returns, nor does its only caller's way out",
			// 0: exit@plt (noreturn); 1: fatal calls exit, no fall-through;
			// 2: calls fatal then returns
			sums:  []*retSummary{nil, proc([][]int{nil}, []int32{-1}, []int32{N}), callThenRet(1)},
			known: []bool{false, false, false},
			want:  []bool{false, false, false},
		},
		{
			name: "another branch returns",
			// 1: fatal; 2: if (x) fatal(); return
			sums: []*retSummary{nil, proc([][]int{nil}, []int32{-1}, []int32{N}),
				proc([][]int{{1, 2}, {2}, nil}, []int32{-1, 1, -1}, []int32{N, N, R})},
			known: []bool{false, false, false},
			want:  []bool{false, false, true},
		},
		{
			name:  "calls to a returning PLT stub and to an unknown target fall through",
			sums:  []*retSummary{nil, callThenRet(0), callThenRet(-1)},
			known: []bool{true, false, false},
			want:  []bool{true, true, true},
		},
		{
			name:  "mutual recursion without a base case",
			sums:  []*retSummary{callThenRet(1), callThenRet(0)},
			known: []bool{false, false},
			want:  []bool{false, false},
		},
		{
			name: "recursion with a base case",
			// 0: if (n) f(n-1); return -- the return is reachable either way
			sums:  []*retSummary{proc([][]int{{1, 2}, {2}, nil}, []int32{-1, 0, -1}, []int32{N, N, R})},
			known: []bool{false},
			want:  []bool{true},
		},
		{
			name: "a callee found later wakes its callers up",
			// 0 calls 1 calls 2 calls 3, which returns
			sums:  []*retSummary{callThenRet(1), callThenRet(2), callThenRet(3), proc([][]int{nil}, []int32{-1}, []int32{R})},
			known: []bool{false, false, false, false},
			want:  []bool{true, true, true, true},
		},
		{
			name: "tail calls return as their target does",
			// 0: jmp 2 (returns); 1: jmp 3 (never returns); 2: ret; 3: loops forever
			sums: []*retSummary{proc([][]int{nil}, []int32{-1}, []int32{2}), proc([][]int{nil}, []int32{-1}, []int32{3}),
				proc([][]int{nil}, []int32{-1}, []int32{R}), proc([][]int{{0}}, []int32{-1}, []int32{N})},
			known: []bool{false, false, false, false},
			want:  []bool{true, false, true, false},
		},
		{
			name:  "an unresolved indirect jump counts as a way out",
			sums:  []*retSummary{proc([][]int{{1}, nil}, []int32{-1, -1}, []int32{N, R})},
			known: []bool{false},
			want:  []bool{true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := slices.Clone(tc.known)
			solveReturns(tc.sums, got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("returns %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSummarize: what the return analysis reads off a graph: the callee a
// call's fall-through waits for, returns and unresolved indirect jumps as
// ways out, jumps out of the procedure as tail calls.
func TestSummarize(t *testing.T) {
	code := []byte{
		0xe8, 0x1b, 0x00, 0x00, 0x00, // 1000: call 1020
		0x85, 0xc0, // 1005: test eax,eax
		0x74, 0x02, // 1007: je 100b
		0xff, 0xe0, // 1009: jmp rax
		0xe9, 0x20, 0x00, 0x00, 0x00, // 100b: jmp 1030
	}
	code = append(code, make([]byte, 0x40-len(code))...)
	img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}}, nil)
	g, err := cfg.Build(img, 0x1000, 0x1000, 0x1010, cfg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	waits := map[uint64]int{0x1020: 5, 0x1030: 7} // procedures not known to return
	s := shapeOf(g).bind(func(t uint64) int {
		if j, ok := waits[t]; ok {
			return j
		}
		return -1
	})
	if want := []int32{5, -1, -1, -1}; !slices.Equal(s.gate, want) {
		t.Errorf("gate %v, want %v", s.gate, want)
	}
	if want := []int32{exitNone, exitNone, exitReturns, 7}; !slices.Equal(s.exit, want) {
		t.Errorf("exit %v, want %v", s.exit, want)
	}
}
