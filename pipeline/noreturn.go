package pipeline

import (
	"bloop/cfg"
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
// compactly: python3.11 has half a million blocks.
type retSummary struct {
	entry int32
	// The successors of block b are to[off[b]:off[b+1]].
	off, to []int32
	// gate[b] is the procedure whose return the fall-through of block
	// b's call waits for, -1 when none does.
	gate []int32
	// exit[b] says block b leaves the procedure returning (exitReturns),
	// or tail-calls procedure exit[b] (>= 0), or neither (exitNone).
	exit []int32
}

func newSummary(entry int, succs [][]int, gate, exit []int32) *retSummary {
	s := &retSummary{entry: int32(entry), off: make([]int32, len(succs)+1), gate: gate, exit: exit}
	for b, ss := range succs {
		for _, x := range ss {
			s.to = append(s.to, int32(x))
		}
		s.off[b+1] = int32(len(s.to))
	}
	return s
}

// succs are block b's successors.
func (s *retSummary) succs(b int32) []int32 { return s.to[s.off[b]:s.off[b+1]] }

const (
	exitNone    = -1
	exitReturns = -2
)

// dyninstNoReturn returns the entries (and ppc64le local entries) of the
// procedures Dyninst finds never return, besides those named noreturn.
func (pl *plan) dyninstNoReturn(workers int) map[uint64]bool {
	img := pl.img
	if isa.For(img.Machine) == nil {
		return nil
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
		if !ok || img.Funcs[j].PLT && !pl.noret(img.Funcs[j].Addr) {
			return -1
		}
		return j
	}
	sums := make([]*retSummary, len(img.Funcs))
	returns := make([]bool, len(img.Funcs))
	for i, fn := range img.Funcs {
		// PLT stubs return unless named noreturn; so do procedures whose
		// code could not be followed.
		returns[i] = !pl.noret(fn.Addr)
	}
	par.For(workers, len(img.Funcs), func(i int) {
		fn := img.Funcs[i]
		if !returns[i] || fn.PLT {
			return
		}
		g, err := cfg.Build(img, fn.Addr, fn.Addr, fn.End, pl.cfgOptions())
		if err != nil {
			return
		}
		s := summarize(g, waitsFor)
		if s.waits() {
			sums[i] = s
			returns[i] = false // until shown to
		} else {
			returns[i] = s.returns(func(int32) bool { return false })
		}
	})
	solveReturns(sums, returns)
	out := map[uint64]bool{}
	for i, fn := range img.Funcs {
		if !returns[i] && !pl.noret(fn.Addr) {
			out[fn.Addr] = true
			if fn.LocalEntry != 0 {
				out[fn.LocalEntry] = true
			}
		}
	}
	return out
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
	mark := make([]bool, len(s.off)-1)
	seen := []int32{s.entry}
	mark[s.entry] = true
	for k := 0; k < len(seen); k++ {
		b := seen[k]
		switch e := s.exit[b]; {
		case e == exitReturns:
			return true
		case e >= 0 && known(e):
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

// summarize reads off g what the return analysis needs; waitsFor is the
// procedure a call or jump to an address waits for, -1 for none (it
// returns).
func summarize(g *cfg.Graph, waitsFor func(uint64) int) *retSummary {
	n := len(g.Blocks)
	gate, exit := make([]int32, n), make([]int32, n)
	for b, blk := range g.Blocks {
		gate[b], exit[b] = -1, exitNone
		last := blk.Last()
		switch last.Kind {
		case isa.Return, isa.CondReturn:
			exit[b] = exitReturns
		case isa.IndirectJump:
			if len(last.Table) == 0 {
				exit[b] = exitReturns // unresolved: Dyninst's UNKNOWN, taken as returning
			}
		case isa.Jump, isa.CondJump:
			if _, in := g.BlockAt(last.Target); !in {
				// a tail call: the procedure returns if its target does
				if j := waitsFor(last.Target); j >= 0 {
					exit[b] = int32(j)
				} else {
					exit[b] = exitReturns
				}
			}
		case isa.Call:
			if len(blk.Succs) > 0 {
				gate[b] = int32(waitsFor(last.Target))
			}
		}
	}
	return newSummary(g.Entry, g.Succs(), gate, exit)
}
