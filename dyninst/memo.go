package dyninst

import (
	"maps"
	"slices"
	"sync/atomic"

	"bloop/cfg"
	"bloop/isa"
	"bloop/structure"
)

// Procedure discovery (Policy.Procedures) parses the whole image once per
// round, and a round only adds procedures in code no symbol covers. Most
// procedures' graphs come out the same every round: a graph depends on
// the image's bytes, the procedure's extent and the answers cfg.Build gets
// from the options' functions. Of those, the calls that never return by
// name (NoReturnAddrs, compared round to round) and the landing pads (the
// image's call-site tables, which every round's image shares) do not
// depend on the procedure table; the rest can (which jumps are tail
// calls, where code runs on, where jump tables lead). So a parseMemo
// keeps, per procedure, what the return analysis needs of its graph
// (procShape) with the table-dependent questions the build asked and
// their answers (queryLog, which logs every question of cfg.Oracle); the next round reuses it when the extent is
// the same and every question gets the same answer again. The result is
// the one a fresh build gives, by construction.
type parseMemo struct {
	byEntry map[uint64]*memoEntry
	noRet   map[uint64]bool              // the last round's procedures named noreturn (Parse.named)
	calls   map[structure.Range][]uint64 // callTargets.memo
	reused  atomic.Int64                 // parses taken from an earlier round

	// verify builds every reused parse afresh too and counts in stale
	// those that come out otherwise (tests).
	verify bool
	stale  atomic.Int64
}

func newParseMemo() *parseMemo {
	return &parseMemo{byEntry: map[uint64]*memoEntry{}, calls: map[structure.Range][]uint64{}}
}

// begin starts ps's round: if the procedures named noreturn changed, no
// earlier parse holds.
func (m *parseMemo) begin(ps *Parse) {
	ps.memo, ps.callers.memo = m, m.calls
	if m.noRet != nil && !maps.Equal(m.noRet, ps.named) {
		clear(m.byEntry)
	}
	m.noRet = ps.named
}

// memoEntry is one procedure's parse: its shape, nil when the build
// failed, and what the build asked.
type memoEntry struct {
	end   uint64
	shape *procShape
	log   *queryLog
}

// parseShape builds procedure i's graph in Dyninst's way and reads its
// shape off it, or takes prev's when prev still holds; with log it
// records the build's questions.
func (ps *Parse) parseShape(i int, prev *memoEntry, log bool) *memoEntry {
	fn := ps.img.Funcs[i]
	opt := ps.Options()
	if prev != nil && prev.end == fn.End && prev.log.same(opt.Procs) {
		ps.memo.reused.Add(1)
		if ps.memo.verify && !prev.shape.equal(ps.parseShape(i, nil, false).shape) {
			ps.memo.stale.Add(1)
		}
		return prev
	}
	e := &memoEntry{end: fn.End}
	if log {
		e.log = &queryLog{}
		opt = e.log.wrap(opt)
	}
	if g, err := cfg.Build(ps.img, fn.Addr, fn.Addr, fn.End, opt); err == nil {
		e.shape = shapeOf(g)
	}
	if log {
		e.log.clip()
	}
	return e
}

// queryLog is every question one build asked of the options' functions,
// with the answer.
type queryLog struct {
	called        []boolQuery
	regions       []regionQuery
	foreign, into []extentQuery
}

type boolQuery struct {
	t   uint64
	ans bool
}

type regionQuery struct {
	t        uint64
	callNext bool
	ans      extentQuery
}

// extentQuery is a question about t answered with an extent (lo, hi) or
// a single address (lo), and whether there is one.
type extentQuery struct {
	t, lo, hi uint64
	ok        bool
}

// wrap returns opt with its oracle recording into l. A build asks from
// one goroutine, so l needs no lock.
func (l *queryLog) wrap(opt cfg.Options) cfg.Options {
	if opt.Procs != nil {
		opt.Procs = loggedOracle{opt.Procs, l}
	}
	return opt
}

// loggedOracle is an oracle that logs every question and its answer. It
// names each method of cfg.Oracle rather than embedding the interface, so
// a method added there does not compile here until it is logged, and a
// parse reused on fewer questions than its build asked cannot be.
type loggedOracle struct {
	o cfg.Oracle
	l *queryLog
}

var _ cfg.Oracle = loggedOracle{}

func (w loggedOracle) Called(t uint64) bool {
	a := w.o.Called(t)
	w.l.called = append(w.l.called, boolQuery{t, a})
	return a
}

func (w loggedOracle) Region(t uint64, callNext bool) (uint64, uint64, bool) {
	lo, hi, ok := w.o.Region(t, callNext)
	w.l.regions = append(w.l.regions, regionQuery{t, callNext, extentQuery{t, lo, hi, ok}})
	return lo, hi, ok
}

func (w loggedOracle) Foreign(t uint64) (uint64, uint64, bool) {
	return logExtent(w.o.Foreign, t, &w.l.foreign)
}

func (w loggedOracle) JumpInto(t uint64) (uint64, uint64, bool) {
	return logExtent(w.o.JumpInto, t, &w.l.into)
}

func logExtent(f func(uint64) (uint64, uint64, bool), t uint64, to *[]extentQuery) (uint64, uint64, bool) {
	lo, hi, ok := f(t)
	*to = append(*to, extentQuery{t, lo, hi, ok})
	return lo, hi, ok
}

// same reports whether o answers every question of l as it was answered;
// a nil log (not recorded) never holds, nor a question without an oracle.
func (l *queryLog) same(o cfg.Oracle) bool {
	if l == nil {
		return false
	}
	if o == nil {
		return len(l.called)+len(l.regions)+len(l.foreign)+len(l.into) == 0
	}
	return sameBools(l.called, o.Called) && sameRegions(l.regions, o.Region) &&
		sameExtents(l.foreign, o.Foreign) && sameExtents(l.into, o.JumpInto)
}

// clip drops the spare capacity of l's lists: a memo holds the logs of
// every procedure at once.
func (l *queryLog) clip() {
	l.called = slices.Clip(slices.Clone(l.called))
	l.regions = slices.Clip(slices.Clone(l.regions))
	l.foreign = slices.Clip(slices.Clone(l.foreign))
	l.into = slices.Clip(slices.Clone(l.into))
}

func sameBools(qs []boolQuery, f func(uint64) bool) bool {
	for _, q := range qs {
		if f(q.t) != q.ans {
			return false
		}
	}
	return true
}

func sameRegions(qs []regionQuery, f func(uint64, bool) (uint64, uint64, bool)) bool {
	for _, q := range qs {
		if lo, hi, ok := f(q.t, q.callNext); (extentQuery{q.t, lo, hi, ok}) != q.ans {
			return false
		}
	}
	return true
}

func sameExtents(qs []extentQuery, f func(uint64) (uint64, uint64, bool)) bool {
	for _, q := range qs {
		if lo, hi, ok := f(q.t); (extentQuery{q.t, lo, hi, ok}) != q {
			return false
		}
	}
	return true
}

// procShape is what the return analysis needs of a procedure's graph, by
// address: which procedure a call or jump out waits for is looked up per
// round (bind), since the procedure table's indices change.
type procShape struct {
	entry   int32
	off, to []int32 // the successors of block b are to[off[b]:off[b+1]]
	ends    []uint8 // how block b leaves the procedure (endNone, ...); a jump or call's target is its out's
	// outs are the blocks that end in a direct call or a jump out of the
	// procedure.
	outs   []out
	runsOn bool // the parse ran past the extent (cfg.Graph.Continued)
}

const (
	endNone    uint8 = iota
	endReturns       // a return, or an indirect jump left unresolved (Dyninst's UNKNOWN, taken as returning)
	endJumpOut       // a tail call: the procedure returns if the target does
	endCall          // a call whose fall-through waits for the callee
)

// shapeOf reads g's shape.
func shapeOf(g *cfg.Graph) *procShape {
	n := len(g.Blocks)
	s := &procShape{entry: int32(g.Entry), off: make([]int32, n+1), ends: make([]uint8, n), runsOn: len(g.Continued) > 0}
	for b, blk := range g.Blocks {
		for _, x := range blk.Succs {
			s.to = append(s.to, int32(x))
		}
		s.off[b+1] = int32(len(s.to))
		last := blk.Last()
		switch last.Kind {
		case isa.Return, isa.CondReturn:
			s.ends[b] = endReturns
		case isa.IndirectJump:
			if len(last.Table) == 0 {
				s.ends[b] = endReturns
			}
		case isa.Jump, isa.CondJump:
			if _, in := g.BlockAt(last.Target); !in {
				s.outs = append(s.outs, out{int32(b), false, last.Target})
				s.ends[b] = endJumpOut
			}
		case isa.Call:
			s.outs = append(s.outs, out{int32(b), true, last.Target})
			if len(blk.Succs) > 0 {
				s.ends[b] = endCall
			}
		}
	}
	s.to, s.outs = slices.Clip(slices.Clone(s.to)), slices.Clip(slices.Clone(s.outs))
	return s
}

// equal reports whether s and t are the same shape (nil for a failed
// build).
func (s *procShape) equal(t *procShape) bool {
	if s == nil || t == nil {
		return s == t
	}
	return s.entry == t.entry && s.runsOn == t.runsOn && slices.Equal(s.off, t.off) &&
		slices.Equal(s.to, t.to) && slices.Equal(s.ends, t.ends) && slices.Equal(s.outs, t.outs)
}

// bind is the shape's return summary, waitsFor giving the procedure a
// call or jump to an address waits for (-1: none, it returns).
func (s *procShape) bind(waitsFor func(uint64) int) *retSummary {
	n := len(s.ends)
	gate, exit := make([]int32, n), make([]int32, n)
	for b, e := range s.ends {
		gate[b], exit[b] = -1, exitNone
		if e == endReturns {
			exit[b] = exitReturns
		}
	}
	for _, o := range s.outs {
		switch s.ends[o.b] {
		case endJumpOut:
			exit[o.b] = exitReturns
			if j := waitsFor(o.t); j >= 0 {
				exit[o.b] = int32(j)
			}
		case endCall:
			gate[o.b] = int32(waitsFor(o.t))
		}
	}
	return &retSummary{procShape: s, gate: gate, exit: exit}
}
