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

// retSummary is what the return analysis needs of one procedure's graph.
type retSummary struct {
	entry int
	succs [][]int
	// gate[b] is the procedure whose return the fall-through of block
	// b's call waits for, -1 when none does.
	gate []int
	// exit[b] says block b leaves the procedure returning (exitReturns),
	// or tail-calls procedure exit[b] (>= 0), or neither (exitNone).
	exit []int
}

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
	sums := make([]*retSummary, len(img.Funcs))
	par.For(workers, len(img.Funcs), func(i int) {
		fn := img.Funcs[i]
		if fn.PLT || pl.noret(fn.Addr) {
			return
		}
		g, err := cfg.Build(img, fn.Addr, fn.Addr, fn.End, pl.cfgOptions())
		if err != nil {
			return // no graph: taken as returning
		}
		sums[i] = summarize(g, index)
	})
	returns := make([]bool, len(img.Funcs))
	for i, fn := range img.Funcs {
		// PLT stubs return unless named noreturn; procedures whose code
		// could not be followed are taken as returning.
		returns[i] = sums[i] == nil && !pl.noret(fn.Addr)
	}
	solveReturns(sums, returns)
	out := map[uint64]bool{}
	for i, s := range sums {
		if s != nil && !returns[i] {
			fn := img.Funcs[i]
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
	work := make([]int, 0, len(sums))
	queued := make([]bool, len(sums))
	for i, s := range sums {
		if s != nil {
			work = append(work, i)
			queued[i] = true
		}
	}
	var seen []int
	mark := map[int]bool{}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		queued[i] = false
		if returns[i] {
			continue
		}
		s := sums[i]
		// Search from the entry; calls to procedures not known to return
		// yet block the way, and the callee is asked to wake i up.
		clear(mark)
		seen = append(seen[:0], s.entry)
		mark[s.entry] = true
		found := false
		for k := 0; k < len(seen) && !found; k++ {
			b := seen[k]
			switch e := s.exit[b]; {
			case e == exitReturns:
				found = true
				continue
			case e >= 0:
				if returns[e] {
					found = true
					continue
				}
				waiting[e] = append(waiting[e], i)
			}
			if c := s.gate[b]; c >= 0 && !returns[c] {
				waiting[c] = append(waiting[c], i)
				continue
			}
			for _, x := range s.succs[b] {
				if !mark[x] {
					mark[x] = true
					seen = append(seen, x)
				}
			}
		}
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

// summarize reads off g what the return analysis needs; index maps
// procedure entries to their index in the image.
func summarize(g *cfg.Graph, index map[uint64]int) *retSummary {
	s := &retSummary{entry: g.Entry, succs: g.Succs(), gate: make([]int, len(g.Blocks)), exit: make([]int, len(g.Blocks))}
	callee := func(t uint64) int {
		if j, ok := index[t]; ok {
			return j
		}
		return -1
	}
	for b, blk := range g.Blocks {
		s.gate[b], s.exit[b] = -1, exitNone
		last := blk.Last()
		switch last.Kind {
		case isa.Return, isa.CondReturn:
			s.exit[b] = exitReturns
		case isa.IndirectJump:
			if len(last.Table) == 0 {
				s.exit[b] = exitReturns // unresolved: Dyninst's UNKNOWN, taken as returning
			}
		case isa.Jump, isa.CondJump:
			if _, in := g.BlockAt(last.Target); !in {
				// a tail call: the procedure returns if its target does
				if j := callee(last.Target); j >= 0 {
					s.exit[b] = j
				} else {
					s.exit[b] = exitReturns
				}
			}
		case isa.Call:
			if len(blk.Succs) > 0 {
				s.gate[b] = callee(last.Target)
			}
		}
	}
	return s
}
