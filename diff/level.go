package diff

import (
	"slices"
	"strconv"

	"bloop/structure"
)

// Matching the scopes of two bodies of one function: loops by file and
// header line within the loop-header tolerance, inlined calls by callee
// and call site, level by level.

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
// inlined call); then leftover loops join a matched loop within the
// header tolerance (a split or fusion), pair with each other within it
// (the same loop: compilers place a header a line or two apart), and
// beyond it as moved; leftover inlined calls of the same callee pair as
// moved call sites; the rest are additions and removals. parentA and
// parentB are the matched scopes whose children these are.
func (d *differ) level(parentA, parentB, as, bs []*scope) {
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
			case s.kind == 'L' && len(la) >= 1 && len(lb) >= 1 && len(la) != len(lb):
				// Copies of one loop on a line: versioned, peeled,
				// unrolled with a remainder, in one build and not so (or
				// less so) in the other.
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
	matches = joinNear(matches, poolA, poolB, paired)
	matches = d.pairLoops(matches, poolA, poolB, paired)
	// Moved inlined calls: same callee, different call site.
	keysI, ga := groupFuzzy(poolA, 'I')
	_, gb := groupFuzzy(poolB, 'I')
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
		if m.a[0].kind == 'L' && len(m.a) != len(m.b) {
			d.addAt(splitOrFused(m), m.a, m.b)
		}
		d.pair(m.a, m.b)
	}
}

// splitOrFused is the change of a loop matched with several: split into
// more copies in b, fused into fewer. Count is the larger number; where
// both sides have several, Old and New give both.
func splitOrFused(m match) Change {
	c := Change{Kind: LoopSplit, Path: m.a[0].path, Count: max(len(m.a), len(m.b))}
	if len(m.a) > len(m.b) {
		c.Kind = LoopFused
	}
	if min(len(m.a), len(m.b)) > 1 {
		c.Old, c.New = strconv.Itoa(len(m.a)), strconv.Itoa(len(m.b))
	}
	return c
}

// match is a scope of a matched with one of b, or with several (a loop
// split or fused).
type match struct{ a, b []*scope }

// joinNear adds to a loop matched one to one, or one to several, the
// leftover loops of the other side in the same file whose header is
// within structure.LoopLineTol of it and that share source lines with it,
// when no leftover loop on the other side is as near: a loop a compiler
// versioned, peeled or vectorised with an epilogue, whose copies' headers
// are a line apart. A loop of other lines is another loop.
func joinNear(matches []match, poolA, poolB []*scope, paired map[*scope]bool) []match {
	for side, pool := range [][]*scope{poolA, poolB} {
		other := poolB
		if side == 1 {
			other = poolA
		}
		for _, s := range pool {
			if s.kind != 'L' || paired[s] || nearLoop(s, other, paired) {
				continue
			}
			best, bestD := -1, structure.LoopLineTol+1
			for i, m := range matches {
				own, far := m.a, m.b
				if side == 1 {
					own, far = m.b, m.a
				}
				if far[0].kind != 'L' || len(far) != 1 || far[0].fuzzy != s.fuzzy {
					continue
				}
				if dl := abs(far[0].line - s.line); dl < bestD && len(own) >= 1 && sharesLines(s, far[0]) {
					best, bestD = i, dl
				}
			}
			if best < 0 {
				continue
			}
			if side == 0 {
				matches[best].a = append(matches[best].a, s)
				sortScopes(matches[best].a)
			} else {
				matches[best].b = append(matches[best].b, s)
				sortScopes(matches[best].b)
			}
			paired[s] = true
		}
	}
	return matches
}

// sharesLines reports whether statements below s and t have a source
// line (not 0) in common.
func sharesLines(s, t *scope) bool {
	lines := map[string]bool{}
	eachStmt(s, func(st stmt, _ *scope) {
		if st.line != "0" {
			lines[st.file+":"+st.line] = true
		}
	})
	found := false
	eachStmt(t, func(st stmt, _ *scope) { found = found || lines[st.file+":"+st.line] })
	return found
}

// nearLoop reports whether a leftover loop of the other side, in the
// same file, has its header within the tolerance of s's: the two are one
// loop, not a split.
func nearLoop(s *scope, other []*scope, paired map[*scope]bool) bool {
	for _, o := range other {
		if o.kind == 'L' && !paired[o] && o.fuzzy == s.fuzzy && abs(o.line-s.line) <= structure.LoopLineTol {
			return true
		}
	}
	return false
}

// pairLoops pairs leftover loops in the same file in line order: within
// the header tolerance as the same loop, further apart as moved.
func (d *differ) pairLoops(matches []match, poolA, poolB []*scope, paired map[*scope]bool) []match {
	keys, ga := groupFuzzy(poolA, 'L')
	_, gb := groupFuzzy(poolB, 'L')
	for _, f := range keys {
		xs := slices.DeleteFunc(slices.Clone(ga[f]), func(s *scope) bool { return paired[s] })
		ys := slices.DeleteFunc(slices.Clone(gb[f]), func(s *scope) bool { return paired[s] })
		if len(xs) == 0 || len(ys) == 0 {
			continue
		}
		byLine := func(a, b *scope) int { return a.line - b.line }
		slices.SortStableFunc(xs, byLine)
		slices.SortStableFunc(ys, byLine)
		for _, p := range pairMonotone(xs, ys) {
			x, y := xs[p[0]], ys[p[1]]
			if abs(x.line-y.line) > structure.LoopLineTol {
				d.addAt(Change{Kind: LoopMoved, Path: x.path, Old: strconv.Itoa(x.line), New: strconv.Itoa(y.line)}, []*scope{x}, []*scope{y})
			}
			matches = append(matches, match{[]*scope{x}, []*scope{y}})
			paired[x], paired[y] = true, true
		}
	}
	return matches
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
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
	if c.Kind == LoopRemoved {
		c.NowIn = d.nowIn(s)
	}
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
