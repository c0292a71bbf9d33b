// Package diff compares two structure files: exact equality of their
// canonical forms (Equal, Compare), byte-level scope-path agreement
// (Paths, PathAgreement), and a structural report of loop, inline and
// statement differences (Diff), for files and for directories (DiffDirs).
// It is bloop diff's engine.
package diff

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"bloop/structure"
)

// DiffOptions controls Diff.
type DiffOptions struct {
	// Addresses also compares v: of procedures, matched loops, and the
	// statements (per file and line) directly inside matched scopes.
	Addresses bool `json:"addresses"`
	// Detail keeps what a page showing the diff needs (bloop diff
	// --html): each procedure's trees (ProcReport.A, B), the scopes each
	// change is about (Change.InA, InB) and the identical procedures
	// (Report.Same). None of it is in the JSON report.
	Detail bool `json:"-"`
}

// Change kinds, in the order they are listed in a report.
const (
	LoopRemoved    = "loop-removed"
	LoopAdded      = "loop-added"
	LoopMoved      = "loop-moved"
	LoopSplit      = "loop-split"
	LoopFused      = "loop-fused"
	InlineRemoved  = "inline-removed"
	InlineAdded    = "inline-added"
	InlineMoved    = "inline-moved"
	StmtIntoLoop   = "statement-into-loop"
	StmtOutOfLoop  = "statement-out-of-loop"
	AddressChanged = "address"
)

var kindRank = map[string]int{
	LoopRemoved: 0, LoopAdded: 1, LoopMoved: 2, LoopSplit: 3, LoopFused: 4,
	InlineRemoved: 5, InlineAdded: 6, InlineMoved: 7,
	StmtIntoLoop: 8, StmtOutOfLoop: 9, AddressChanged: 10,
}

// Change is one structural difference inside a procedure.
type Change struct {
	Kind string `json:"kind"`
	// Path is the scope inside the procedure, written as in Paths; in b
	// for additions, in a otherwise; "file:line" for statements moving
	// into or out of loops.
	Path string `json:"path"`
	// Old and New: the header line for loop-moved, the call site for
	// inline-moved, v for address (or "(none)").
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
	// Count: for loop-split / loop-fused, the number of loops on the side
	// that has several.
	Count int `json:"count,omitempty"`
	// NestedLoops and NestedInlines: for added and removed loops and
	// inlined calls, the loops and inlined calls inside them (also gone,
	// and included in the summary counts).
	NestedLoops   int `json:"nested_loops,omitempty"`
	NestedInlines int `json:"nested_inlined_calls,omitempty"`
	// InA and InB (with DiffOptions.Detail): the canonical elements the
	// change is about on each side: P for the procedure, L for a loop,
	// the callee A of an inlined call, S for statements. A scope added
	// or removed has on the other side the scopes its enclosing scope was
	// matched with, where it would be.
	InA []*structure.Node `json:"-"`
	InB []*structure.Node `json:"-"`
}

// Diff canonicalizes a and b and reports their structural differences:
// procedures are matched by link name and file basename, and scopes inside
// them by kind, file basename and line, ignoring addresses and ids unless
// opts.Addresses is set.
func Diff(a, b *structure.Doc, opts DiffOptions) *Report {
	r := &Report{Version: ReportVersion, A: a.Name, B: b.Name, Options: opts, Procedures: []ProcReport{}, Warnings: []string{}}
	ca, errA := structure.Canonicalize(a)
	cb, errB := structure.Canonicalize(b)
	for _, e := range []error{errA, errB} {
		var re *structure.RangelessError
		if errors.As(e, &re) {
			for _, p := range re.Paths {
				r.Warnings = append(r.Warnings, re.File+": no address range: "+p)
			}
		}
	}
	pa, pb := collectProcs(ca), collectProcs(cb)
	idx := map[string][]int{}
	for i, p := range pb {
		k := procKey(p)
		idx[k] = append(idx[k], i)
	}
	usedB := make([]bool, len(pb))
	for _, p := range pa {
		k := procKey(p)
		if len(idx[k]) == 0 {
			r.Procedures = append(r.Procedures, procReport(p, nil, ProcRemoved, []Change{}, opts))
			continue
		}
		q := pb[idx[k][0]]
		usedB[idx[k][0]] = true
		idx[k] = idx[k][1:]
		d := &differ{opts: opts}
		d.procedure(p, q)
		switch {
		case len(d.changes) > 0:
			slices.SortStableFunc(d.changes, cmpChange)
			r.Procedures = append(r.Procedures, procReport(p, q, ProcChanged, d.changes, opts))
		case opts.Detail:
			r.Same = append(r.Same, ProcReport{Name: p.name, Pretty: p.pretty, File: p.file, Status: ProcSame})
		}
	}
	for i, p := range pb {
		if !usedB[i] {
			r.Procedures = append(r.Procedures, procReport(nil, p, ProcAdded, []Change{}, opts))
		}
	}
	slices.SortStableFunc(r.Procedures, cmpProcs)
	slices.SortStableFunc(r.Same, cmpProcs)
	r.summarize()
	return r
}

// procReport is the report of a procedure on side a, side b or both (its
// name and file are the same on both).
func procReport(a, b *proc, status string, changes []Change, opts DiffOptions) ProcReport {
	p := a
	if p == nil {
		p = b
	}
	pr := ProcReport{Name: p.name, Pretty: p.pretty, File: p.file, Status: status, Changes: changes}
	if opts.Detail {
		if a != nil {
			pr.A, pr.PathA = a.node, a.path
		}
		if b != nil {
			pr.B, pr.PathB = b.node, b.path
		}
	}
	return pr
}

func cmpProcs(x, y ProcReport) int {
	if c := strings.Compare(x.File, y.File); c != 0 {
		return c
	}
	if c := strings.Compare(x.Name, y.Name); c != 0 {
		return c
	}
	return strings.Compare(x.Status, y.Status)
}

// procKey matches procedures by link name and file basename. The pseudo
// file "[<binary basename>]" (code without line information) matches any
// other such name, so that builds of one source under different binary
// names can be compared.
func procKey(p *proc) string {
	f := p.file
	if strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]") {
		f = "[]"
	}
	return p.name + "\x00" + f
}

func cmpChange(x, y Change) int {
	if c := kindRank[x.Kind] - kindRank[y.Kind]; c != 0 {
		return c
	}
	for _, c := range []int{strings.Compare(x.Path, y.Path), strings.Compare(x.Old, y.Old), strings.Compare(x.New, y.New)} {
		if c != 0 {
			return c
		}
	}
	if c := x.Count - y.Count; c != 0 {
		return c
	}
	if c := x.NestedLoops - y.NestedLoops; c != 0 {
		return c
	}
	return x.NestedInlines - y.NestedInlines
}

type differ struct {
	opts    DiffOptions
	changes []Change
}

func (d *differ) add(c Change) { d.changes = append(d.changes, c) }

// addAt adds c with the scopes it is about on each side, kept when the
// options ask for detail.
func (d *differ) addAt(c Change, as, bs []*scope) {
	if d.opts.Detail {
		c.InA, c.InB = nodesOf(as), nodesOf(bs)
	}
	d.add(c)
}

func nodesOf(ss []*scope) []*structure.Node {
	out := make([]*structure.Node, len(ss))
	for i, s := range ss {
		out[i] = s.node
	}
	return out
}

func (d *differ) procedure(a, b *proc) {
	d.pair([]*scope{a.body}, []*scope{b.body})
	d.statementMoves(a.body, b.body)
}

// pair compares matched scopes (one side may hold several: split/fused).
func (d *differ) pair(as, bs []*scope) {
	if d.opts.Addresses {
		if len(as) == 1 && len(bs) == 1 && as[0].kind != 'I' && as[0].v != bs[0].v {
			d.addAt(Change{Kind: AddressChanged, Path: as[0].path, Old: as[0].v, New: bs[0].v}, as, bs)
		}
		d.compareStmts(as, bs)
	}
	d.level(as, bs, mergedKids(as), mergedKids(bs))
}

func mergedKids(ss []*scope) []*scope {
	if len(ss) == 1 {
		return ss[0].kids
	}
	var out []*scope
	for _, s := range ss {
		out = append(out, s.kids...)
	}
	sortScopes(out)
	return out
}

// level matches the child scopes of a matched pair: exact key matches
// first (1:n loops are splits, n:1 fusions); then a scope whose subtree
// holds a key still unmatched at this level on the other side is dropped
// and its children promoted (an extra or missing enclosing loop or
// inlined call); then leftover loops in the same file pair up as moved
// and leftover inlined calls of the same callee as moved call sites; the
// rest are additions and removals. parentA and parentB are the matched
// scopes whose children these are.
func (d *differ) level(parentA, parentB, as, bs []*scope) {
	type match struct{ a, b []*scope }
	var matches []match
	poolA, poolB := slices.Clone(as), slices.Clone(bs)
	for {
		ia, ib := groupByKey(poolA), groupByKey(poolB)
		var restA, restB []*scope
		done := map[string]bool{}
		for _, s := range slices.Concat(poolA, poolB) {
			if done[s.key] {
				continue
			}
			done[s.key] = true
			la, lb := ia[s.key], ib[s.key]
			switch {
			case s.kind == 'L' && len(la) == 1 && len(lb) >= 2:
				d.addAt(Change{Kind: LoopSplit, Path: la[0].path, Count: len(lb)}, la, lb)
				matches = append(matches, match{la, lb})
			case s.kind == 'L' && len(la) >= 2 && len(lb) == 1:
				d.addAt(Change{Kind: LoopFused, Path: la[0].path, Count: len(la)}, la, lb)
				matches = append(matches, match{la, lb})
			default:
				n := min(len(la), len(lb))
				for k := range n {
					matches = append(matches, match{la[k : k+1], lb[k : k+1]})
				}
				restA = append(restA, la[n:]...)
				restB = append(restB, lb[n:]...)
			}
		}
		sortScopes(restA)
		sortScopes(restB)
		// Promote on one side at a time so that two scopes that each hold
		// the other's key (interchanged loops) do not both dissolve.
		if next, ok := d.promote(restA, restB, parentB, false); ok {
			poolA, poolB = next, restB
			continue
		}
		if next, ok := d.promote(restB, restA, parentA, true); ok {
			poolA, poolB = restA, next
			continue
		}
		poolA, poolB = restA, restB
		break
	}
	paired := map[*scope]bool{}
	// Moved loops: same file, different line.
	keysL, ga := groupFuzzy(poolA, 'L')
	_, gb := groupFuzzy(poolB, 'L')
	for _, f := range keysL {
		xs, ys := ga[f], gb[f]
		if len(ys) == 0 {
			continue
		}
		byLine := func(a, b *scope) int { return a.line - b.line }
		slices.SortStableFunc(xs, byLine)
		slices.SortStableFunc(ys, byLine)
		for _, p := range pairMonotone(xs, ys) {
			x, y := xs[p[0]], ys[p[1]]
			d.addAt(Change{Kind: LoopMoved, Path: x.path, Old: strconv.Itoa(x.line), New: strconv.Itoa(y.line)}, []*scope{x}, []*scope{y})
			matches = append(matches, match{[]*scope{x}, []*scope{y}})
			paired[x], paired[y] = true, true
		}
	}
	// Moved inlined calls: same callee, different call site.
	keysI, ga := groupFuzzy(poolA, 'I')
	_, gb = groupFuzzy(poolB, 'I')
	for _, f := range keysI {
		xs, ys := ga[f], gb[f]
		for k := range min(len(xs), len(ys)) {
			d.addAt(Change{Kind: InlineMoved, Path: xs[k].path, Old: xs[k].site, New: ys[k].site}, xs[k:k+1], ys[k:k+1])
			matches = append(matches, match{xs[k : k+1], ys[k : k+1]})
			paired[xs[k]], paired[ys[k]] = true, true
		}
	}
	for _, s := range poolA {
		if !paired[s] {
			d.gone(s, parentB, false)
		}
	}
	for _, s := range poolB {
		if !paired[s] {
			d.gone(s, parentA, true)
		}
	}
	for _, m := range matches {
		d.pair(m.a, m.b)
	}
}

// promote dissolves the scopes in rest whose strict descendants include a
// key of other, reporting them as removed (from a) or added (to b), and
// returns rest with their children in their place. where is the other
// side's enclosing scope.
func (d *differ) promote(rest, other, where []*scope, added bool) ([]*scope, bool) {
	want := map[string]bool{}
	for _, s := range other {
		want[s.key] = true
	}
	var out []*scope
	changed := false
	for _, s := range rest {
		if len(want) > 0 && descendantHas(s, want) {
			d.addOneSided(Change{Kind: pick(s, added), Path: s.path}, s, where, added)
			out = append(out, s.kids...)
			changed = true
		} else {
			out = append(out, s)
		}
	}
	sortScopes(out)
	return out, changed
}

func descendantHas(s *scope, keys map[string]bool) bool {
	for _, k := range s.kids {
		if keys[k.key] || descendantHas(k, keys) {
			return true
		}
	}
	return false
}

// addOneSided adds the removal (from a) or the addition (to b) of s;
// where is the other side's enclosing scope.
func (d *differ) addOneSided(c Change, s *scope, where []*scope, added bool) {
	if added {
		d.addAt(c, where, []*scope{s})
	} else {
		d.addAt(c, []*scope{s}, where)
	}
}

// gone reports an unmatched scope, removed from a or added to b; the
// loops and inlined calls inside it are counted in the same change rather
// than listed one by one.
func (d *differ) gone(s *scope, where []*scope, added bool) {
	c := Change{Kind: pick(s, added), Path: s.path}
	var count func(s *scope)
	count = func(s *scope) {
		for _, k := range s.kids {
			if k.kind == 'L' {
				c.NestedLoops++
			} else {
				c.NestedInlines++
			}
			count(k)
		}
	}
	count(s)
	d.addOneSided(c, s, where, added)
}

// pick is the kind of change of a loop or an inlined call added or
// removed.
func pick(s *scope, added bool) string {
	switch {
	case s.kind == 'L' && added:
		return LoopAdded
	case s.kind == 'L':
		return LoopRemoved
	case added:
		return InlineAdded
	}
	return InlineRemoved
}

func groupByKey(ss []*scope) map[string][]*scope {
	m := map[string][]*scope{}
	for _, s := range ss {
		m[s.key] = append(m[s.key], s)
	}
	return m
}

// groupFuzzy groups the scopes of kind by fuzzy key; keys are in
// first-appearance order.
func groupFuzzy(ss []*scope, kind byte) ([]string, map[string][]*scope) {
	var keys []string
	m := map[string][]*scope{}
	for _, s := range ss {
		if s.kind != kind {
			continue
		}
		if _, ok := m[s.fuzzy]; !ok {
			keys = append(keys, s.fuzzy)
		}
		m[s.fuzzy] = append(m[s.fuzzy], s)
	}
	return keys, m
}

// pairMonotone pairs min(len(xs), len(ys)) loops of two line-sorted lists
// in order, minimizing the total line distance (a small DP: lists are the
// leftover loops of one nesting level).
func pairMonotone(xs, ys []*scope) [][2]int {
	if len(xs) > len(ys) {
		ps := pairMonotone(ys, xs)
		for i := range ps {
			ps[i][0], ps[i][1] = ps[i][1], ps[i][0]
		}
		return ps
	}
	n, m := len(xs), len(ys)
	if n == 0 {
		return nil
	}
	if n*m > 1<<20 {
		// Too large for the DP (never seen in real code): pair in order.
		out := make([][2]int, n)
		for i := range out {
			out[i] = [2]int{i, i}
		}
		return out
	}
	const inf = int(^uint(0) >> 2)
	// cost[i][j]: best cost pairing xs[:i] with a subsequence of ys[:j].
	cost := make([][]int, n+1)
	for i := range cost {
		cost[i] = make([]int, m+1)
		for j := range cost[i] {
			if j < i {
				cost[i][j] = inf
			}
		}
	}
	for i := 1; i <= n; i++ {
		for j := i; j <= m; j++ {
			d := xs[i-1].line - ys[j-1].line
			if d < 0 {
				d = -d
			}
			take := cost[i-1][j-1] + d
			skip := inf
			if j > i {
				skip = cost[i][j-1]
			}
			cost[i][j] = min(take, skip)
		}
	}
	var out [][2]int
	for i, j := n, m; i > 0; j-- {
		d := xs[i-1].line - ys[j-1].line
		if d < 0 {
			d = -d
		}
		if j == i || cost[i][j] == cost[i-1][j-1]+d {
			out = append(out, [2]int{i - 1, j - 1})
			i--
		}
	}
	slices.Reverse(out)
	return out
}
