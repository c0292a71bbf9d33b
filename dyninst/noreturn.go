package dyninst

import (
	"cmp"

	"bloop/isa"
	"bloop/par"
)

// Dyninst (and so hpcstruct) knows more procedures that never return than
// the names procs.NoReturn lists: its parser gives a procedure a return
// status as it parses it, and a call's fall-through edge is parsed only
// once the callee is known to return. A procedure returns when a return
// (or conditional return) is reachable from its entry, when it has an
// indirect jump it cannot resolve (status unknown, taken as returning), or
// when it tail-calls a procedure that returns; reachable here means
// through the fall-through of calls to procedures that return. What is
// left never returns: a local `fatal` that ends in exit() ends the block
// of every call to it, and the code after such a call is in no loop.
// Mutually recursive procedures without another way out are among them
// (the least fixpoint: nothing returns until shown to).

// retSummary is what the return analysis needs of one procedure's graph,
// compactly (python3.11 has half a million blocks): its shape, bound to
// this round's procedure indices.
type retSummary struct {
	*procShape
	// gate[b] is the procedure whose return the fall-through of block
	// b's call waits for, -1 when none does.
	gate []int32
	// exit[b] says block b leaves the procedure returning (exitReturns),
	// or tail-calls procedure exit[b] (>= 0), or neither (exitNone).
	exit []int32
}

// out is a block that ends in a direct call (call) or a jump out of its
// procedure, to t.
type out struct {
	b    int32
	call bool
	t    uint64
}

// succs are block b's successors.
func (s *retSummary) succs(b int32) []int32 { return s.to[s.off[b]:s.off[b+1]] }

const (
	exitNone    = -1
	exitReturns = -2
)

// Facts is what parsing every procedure of an image as Dyninst's
// ParseAPI parses it tells (Parse.Facts).
type Facts struct {
	// NoReturn holds the entries (and ppc64le local entries) of the
	// procedures found never to return, besides those named noreturn.
	NoReturn map[uint64]bool
	// RunsOn holds the entries of the procedures whose parse ran past
	// their extent into another procedure's code (cfg.Graph.Continued)
	// with every call taken to return but those named noreturn: only they
	// can claim another's entry (pipeline's claimedEntries).
	RunsOn map[uint64]bool
	// calls and jumps are the targets of the direct calls, and of the
	// jumps out of their procedure, in the code the parses reach through
	// the calls that return (procedure discovery: Policy.Procedures).
	calls, jumps map[uint64]bool
}

// Facts parses every procedure of the image as Dyninst does, with
// fall-through edges after the calls to procedures that return, and
// reports what it finds.
func (ps *Parse) Facts(workers int) *Facts {
	img := ps.img
	facts := &Facts{NoReturn: map[uint64]bool{}, RunsOn: map[uint64]bool{}, calls: map[uint64]bool{}, jumps: map[uint64]bool{}}
	if isa.For(img.Machine) == nil {
		return facts
	}
	index := map[uint64]int{}
	for i, fn := range img.Funcs {
		index[fn.Addr] = i
		if fn.LocalEntry != 0 {
			index[fn.LocalEntry] = i
		}
	}
	// A call's fall-through waits for procedures that may not return:
	// not for PLT stubs but those named noreturn, whose calls have no
	// fall-through anyway (tail calls to them do wait).
	waitsFor := func(t uint64) int {
		j, ok := index[t]
		if !ok || img.Funcs[j].PLT && !ps.noret(img.Funcs[j].Addr) {
			return -1
		}
		return j
	}
	n := len(img.Funcs)
	sums := make([]*retSummary, n)  // the summaries that wait for other procedures' statuses
	named := make([]*retSummary, n) // those of procedures named noreturn
	returns := make([]bool, n)
	runsOn := make([]bool, n)
	outs := make([][]out, n) // what the parse reaches, where no status decides it
	for i, fn := range img.Funcs {
		// PLT stubs return unless named noreturn; so do procedures whose
		// code could not be followed.
		returns[i] = !ps.noret(fn.Addr)
	}
	parses := make([]*memoEntry, n)
	if ps.memo != nil {
		for i, fn := range img.Funcs {
			parses[i] = ps.memo.byEntry[fn.Addr]
		}
	}
	par.For(workers, n, func(i int) {
		fn := img.Funcs[i]
		if fn.PLT {
			parses[i] = nil
			return
		}
		parses[i] = ps.parseShape(i, parses[i], ps.memo != nil)
		sh := parses[i].shape
		if sh == nil {
			return
		}
		runsOn[i] = sh.runsOn
		s := sh.bind(waitsFor)
		switch {
		case !s.waits():
			returns[i] = returns[i] && s.returns(func(int32) bool { return false })
			outs[i] = s.reached(nil)
		case !returns[i]:
			named[i] = s
		default:
			sums[i] = s
			returns[i] = false // until shown to
		}
	})
	if ps.memo != nil {
		for i, fn := range img.Funcs {
			if parses[i] != nil {
				ps.memo.byEntry[fn.Addr] = parses[i]
			}
		}
	}
	solveReturns(sums, returns)
	known := func(c int32) bool { return returns[c] }
	for i, fn := range img.Funcs {
		if runsOn[i] {
			facts.RunsOn[fn.Addr] = true
		}
		if !returns[i] && !ps.noret(fn.Addr) {
			facts.NoReturn[fn.Addr] = true
			if fn.LocalEntry != 0 {
				facts.NoReturn[fn.LocalEntry] = true
			}
		}
		if s := cmp.Or(sums[i], named[i]); s != nil {
			outs[i] = s.reached(known)
		}
		for _, o := range outs[i] {
			if o.call {
				facts.calls[o.t] = true
			} else {
				facts.jumps[o.t] = true
			}
		}
	}
	return facts
}

// solveReturns completes returns (true for the procedures known to return
// without a summary) with every summarized procedure from whose entry a
// way out is reachable, by a worklist: a procedure blocked by a callee is
// looked at again when that callee is found to return.
func solveReturns(sums []*retSummary, returns []bool) {
	waiting := make([][]int, len(sums)) // callee -> procedures to look at again
	var work []int
	queued := make([]bool, len(sums))
	for i, s := range sums {
		if s != nil {
			work = append(work, i)
			queued[i] = true
		}
	}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		queued[i] = false
		if returns[i] {
			continue
		}
		// Calls to procedures not known to return yet block the way, and
		// the callee is asked to wake i up.
		found := sums[i].returns(func(c int32) bool {
			if returns[c] {
				return true
			}
			waiting[c] = append(waiting[c], i)
			return false
		})
		if !found {
			continue
		}
		returns[i] = true
		for _, j := range waiting[i] {
			if !returns[j] && !queued[j] {
				queued[j] = true
				work = append(work, j)
			}
		}
		waiting[i] = nil
	}
}

// returns reports whether a way out is reachable from the entry, where
// known says whether a procedure returns.
func (s *retSummary) returns(known func(int32) bool) bool {
	return s.walk([]int32{s.entry}, known, func(b int32) bool {
		switch e := s.exit[b]; {
		case e == exitReturns:
			return true
		case e >= 0 && known(e):
			return true
		}
		return false
	})
}

// reached lists the calls and jumps out of the procedure in the blocks
// reachable from the entry and from the blocks nothing leads to (landing
// pads, code only jumps Dyninst takes for tail calls reach), where known
// says whether a procedure returns (nil: all do).
func (s *retSummary) reached(known func(int32) bool) []out {
	if known == nil {
		known = func(int32) bool { return true }
	}
	n := len(s.off) - 1
	led := make([]bool, n)
	for _, x := range s.to {
		led[x] = true
	}
	roots := []int32{s.entry}
	for b := range n {
		if !led[b] && int32(b) != s.entry {
			roots = append(roots, int32(b))
		}
	}
	mark := make([]bool, n)
	s.walk(roots, known, func(b int32) bool {
		mark[b] = true
		return false
	})
	var got []out
	for _, o := range s.outs {
		if mark[o.b] {
			got = append(got, o)
		}
	}
	return got
}

// walk visits the blocks reachable from roots, through the fall-through
// of calls to procedures known to return only, until visit returns true;
// it reports whether it did.
func (s *retSummary) walk(roots []int32, known func(int32) bool, visit func(b int32) bool) bool {
	mark := make([]bool, len(s.off)-1)
	var seen []int32
	for _, r := range roots {
		if !mark[r] {
			mark[r] = true
			seen = append(seen, r)
		}
	}
	for k := 0; k < len(seen); k++ {
		b := seen[k]
		if visit(b) {
			return true
		}
		if c := s.gate[b]; c >= 0 && !known(c) {
			continue
		}
		for _, x := range s.succs(b) {
			if !mark[x] {
				mark[x] = true
				seen = append(seen, x)
			}
		}
	}
	return false
}

// waits reports whether the summary depends on other procedures.
func (s *retSummary) waits() bool {
	for b := range s.gate {
		if s.gate[b] >= 0 || s.exit[b] >= 0 {
			return true
		}
	}
	return false
}
