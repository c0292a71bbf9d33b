// Package havlak computes loop nesting forests with Paul Havlak's algorithm
// ("Nesting of Reducible and Irreducible Loops", TOPLAS 19(4), 1997).
//
// The implementation is built for very large procedures:
//
//   - the depth-first search is iterative, so deep graphs cannot overflow
//     the goroutine stack;
//   - all per-node state lives in dense int32 slices indexed by DFS preorder
//     number, and edge lists are intrusive linked lists in flat slices, so
//     there are no maps and almost no per-node allocations;
//   - both union-find structures use union by rank and path halving.
//
// Havlak's original formulation can take quadratic time: a non-back edge that
// enters a nest of irreducible loops from outside is re-appended to the
// predecessor list of every enclosing header, once per nesting level
// (Ramalingam, "On Loops, Dominators, and Dominance Frontiers", TOPLAS 2002).
// This implementation avoids the re-appending while computing exactly the
// same forest:
//
//   - A forward edge u->x (u a proper DFS ancestor of x, not its parent)
//     never adds anything to a loop body: the body search follows tree
//     edges via parent[], which already reaches u from x. It only matters
//     for irreducibility: it is an entry into every loop containing x whose
//     header is deeper than u. So each node keeps just the shallowest such
//     source, minAnc[x], and a loop header inherits the minimum over its
//     body. That is one int32 per node instead of a list that grows with
//     the nesting depth.
//   - A cross edge y->x with a = LCA(x, y) behaves like a forward edge a->x for
//     the loops whose headers lie strictly below a (y is outside all of them),
//     and like an ordinary body predecessor for loops headed at a or above
//     (y is a descendant of those headers). So it contributes a to minAnc[x]
//     and is parked in a bucket at a; when the reverse-preorder sweep reaches
//     a, the edge is attached to the then-outermost loop representative of x,
//     where the enclosing loop's body search will find it. The LCAs are
//     computed during the DFS with Tarjan's offline LCA union-find.
//
// The result is O((N+E)·α(N)) time and O(N+E) space.
package havlak

import (
	"math"
	"slices"
)

// Loop is one loop of the forest.
type Loop struct {
	Header      int     // DFS-chosen header node (the Havlak header)
	Nodes       []int   // nodes whose innermost loop is this one, INCLUDING the header, sorted ascending
	Children    []*Loop // directly nested loops, sorted by Header ascending
	Parent      *Loop   // nil for a top-level loop
	Irreducible bool    // true when the loop has more than one entry (Havlak's irreducible marking)
	Depth       int     // 1 for top-level loops
}

// Forest is the loop nesting forest of one graph.
type Forest struct {
	Loops []*Loop // every loop, in a deterministic order: sorted by Header ascending
	Top   []*Loop // top-level loops, sorted by Header ascending
	// Innermost[v] is the innermost loop containing node v, or nil. len == n.
	Innermost []*Loop
}

// AllNodes returns every node of l and of its nested loops, sorted ascending.
func (l *Loop) AllNodes() []int {
	if l == nil {
		return nil
	}
	var out []int
	// Explicit stack: nesting depth can be as large as the procedure.
	stack := []*Loop{l}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, x.Nodes...)
		stack = append(stack, x.Children...)
	}
	slices.Sort(out)
	return out
}

// none marks an absent node in int32 slices.
const none = -1

// noAnc is the minAnc value of a node without forward or cross in-edges; it is
// larger than every preorder number so it never flags a header irreducible.
const noAnc = math.MaxInt32

// Find computes the loop forest of the graph with nodes 0..n-1, start node entry,
// and successor lists succs (len(succs) == n; duplicate edges and self-loops allowed;
// successors may be listed in any order). Nodes unreachable from entry belong to no loop.
// The DFS visits successors in the order given, so the result is deterministic for a
// given input.
//
// Invalid input does not panic: a negative n is treated as 0, an entry outside
// 0..n-1 yields an empty forest, successor indices outside 0..n-1 are ignored,
// and missing successor lists (len(succs) < n) count as empty.
// Graphs must have fewer than 2^31-1 nodes, as nodes are stored as int32.
func Find(n, entry int, succs [][]int) *Forest {
	if n < 0 {
		n = 0
	}
	if n >= math.MaxInt32 {
		// Unreachable in practice (succs alone would need tens of GB), but
		// int32 truncation would silently corrupt the result, so refuse loudly.
		panic("havlak: graph too large")
	}
	f := &Forest{Innermost: make([]*Loop, n)}
	if entry < 0 || entry >= n {
		return f
	}
	var h finder
	h.dfs(n, entry, succs)
	h.findLoops()
	h.build(f)
	return f
}

// finder holds the working state of one Find call. Unless noted otherwise,
// slices are indexed by DFS preorder number.
type finder struct {
	n    int     // number of nodes in the input
	num  []int32 // original id -> preorder number, none if unreachable
	orig []int32 // preorder number -> original id; len is the reachable count

	parent []int32 // DFS tree parent, none for the root
	minAnc []int32 // shallowest forward-edge source / cross-edge LCA, see package doc

	// Back edges, as linked lists keyed by target.
	backHead []int32
	backNext []int32 // per back edge
	backSrc  []int32 // per back edge
	self     []bool  // node has a self-loop

	// Cross edges, bucketed by the LCA of their endpoints and later
	// re-linked to the loop representative of their target.
	crossHead []int32 // keyed by LCA
	crossNext []int32 // per cross edge
	crossSrc  []int32 // per cross edge
	crossDst  []int32 // per cross edge
	realHead  []int32 // keyed by loop representative
	realNext  []int32 // per cross edge

	// Loop results.
	isHeader    []bool
	irreducible []bool
	absorber    []int32 // header whose body absorbed this node, none if none
	numLoops    int

	uf dsu
}

// dfs numbers the reachable nodes in preorder and classifies every edge out
// of them while the search runs, because that is when Tarjan's offline LCA
// can answer the cross-edge queries for free.
func (h *finder) dfs(n, entry int, succs [][]int) {
	h.n = n
	h.num = make([]int32, n)
	for i := range h.num {
		h.num[i] = none
	}
	h.orig = make([]int32, 0, n)
	h.parent = make([]int32, n)
	h.minAnc = make([]int32, n)
	h.backHead = make([]int32, n)
	h.crossHead = make([]int32, n)
	h.self = make([]bool, n)
	done := make([]bool, n)
	pos := make([]int, n) // next successor index to scan
	// The LCA union-find merges each finished node into its parent's set, so
	// the label of a finished node's set is its deepest ancestor that is
	// still on the DFS stack.
	h.uf.reset(n)

	visit := func(v int, p int32) int32 {
		id := int32(len(h.orig))
		h.num[v] = id
		h.orig = append(h.orig, int32(v))
		h.parent[id] = p
		h.minAnc[id] = noAnc
		h.backHead[id] = none
		h.crossHead[id] = none
		return id
	}
	stack := []int32{visit(entry, none)}
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		var ss []int
		if ou := int(h.orig[u]); ou < len(succs) {
			ss = succs[ou]
		}
		if pos[u] >= len(ss) {
			done[u] = true
			stack = stack[:len(stack)-1]
			if p := h.parent[u]; p != none {
				h.uf.union(u, p, p)
			}
			continue
		}
		v := ss[pos[u]]
		pos[u]++
		if v < 0 || v >= n {
			continue // robustness: ignore dangling successors
		}
		vi := h.num[v]
		switch {
		case vi == none: // tree edge
			stack = append(stack, visit(v, u))
		case !done[vi]: // v is on the stack: an ancestor of u, or u itself
			if vi == u {
				h.self[vi] = true
				break
			}
			h.backNext = append(h.backNext, h.backHead[vi])
			h.backSrc = append(h.backSrc, u)
			h.backHead[vi] = int32(len(h.backSrc) - 1)
		default:
			a := h.uf.lookup(vi) // LCA(u, v), since u is the top of the stack
			h.minAnc[vi] = min(h.minAnc[vi], a)
			if a == u {
				break // forward edge (or duplicate tree edge)
			}
			h.crossNext = append(h.crossNext, h.crossHead[a])
			h.crossSrc = append(h.crossSrc, u)
			h.crossDst = append(h.crossDst, vi)
			h.crossHead[a] = int32(len(h.crossSrc) - 1)
		}
	}
}

// findLoops is Havlak's main sweep: visit candidate headers in reverse
// preorder, so every loop nested inside w's loop is collapsed (unioned into
// its header) before w's body is gathered.
func (h *finder) findLoops() {
	N := len(h.orig)
	h.uf.reset(N)
	h.isHeader = make([]bool, N)
	h.irreducible = make([]bool, N)
	h.absorber = make([]int32, N)
	h.realHead = make([]int32, N)
	h.realNext = make([]int32, len(h.crossSrc))
	mark := make([]int32, N) // mark[x] == w+1 means x is already in w's body
	for i := range N {
		h.absorber[i] = none
		h.realHead[i] = none
	}
	var body []int32

	for w := int32(N - 1); w >= 0; w-- {
		// Cross edges whose LCA is w are ordinary predecessors for w and
		// every header above it; hand them to the current representative
		// of their target, which is what those headers' searches will meet.
		for e := h.crossHead[w]; e != none; e = h.crossNext[e] {
			r := h.uf.lookup(h.crossDst[e])
			h.realNext[e] = h.realHead[r]
			h.realHead[r] = e
		}

		stamp := w + 1
		body = body[:0]
		add := func(y int32) {
			r := h.uf.lookup(y)
			if r != w && mark[r] != stamp {
				mark[r] = stamp
				body = append(body, r)
			}
		}
		for e := h.backHead[w]; e != none; e = h.backNext[e] {
			add(h.backSrc[e])
		}
		if len(body) == 0 && !h.self[w] {
			continue
		}

		// Walk backwards from the back-edge sources. Every representative
		// met is a proper descendant of w, so its tree parent and its
		// realised cross-edge sources are descendants of w too (or w).
		irr := false
		for i := 0; i < len(body); i++ {
			x := body[i]
			if m := h.minAnc[x]; m < w {
				// An edge from outside w's subtree enters the body.
				irr = true
				h.minAnc[w] = min(h.minAnc[w], m)
			}
			add(h.parent[x])
			for e := h.realHead[x]; e != none; e = h.realNext[e] {
				add(h.crossSrc[e])
			}
		}

		h.isHeader[w] = true
		h.irreducible[w] = irr
		h.numLoops++
		for _, x := range body {
			h.absorber[x] = w
			h.uf.union(x, w, w)
		}
	}
}

// build converts the per-node results into the exported forest. Iterating
// nodes by original id fills every Nodes/Children/Loops slice already in
// ascending order, so nothing needs sorting.
func (h *finder) build(f *Forest) {
	if h.numLoops == 0 {
		return
	}
	loops := make([]Loop, h.numLoops)
	f.Loops = make([]*Loop, 0, h.numLoops)
	loopOf := make([]int32, len(h.orig)) // preorder -> index in loops
	for v := range h.n {
		x := h.num[v]
		if x == none || !h.isHeader[x] {
			continue
		}
		l := &loops[len(f.Loops)]
		loopOf[x] = int32(len(f.Loops))
		l.Header = v
		l.Irreducible = h.irreducible[x]
		f.Loops = append(f.Loops, l)
	}

	// innermost returns the loop index for preorder node x, or none.
	innermost := func(x int32) int32 {
		if h.isHeader[x] {
			return loopOf[x]
		}
		if a := h.absorber[x]; a != none {
			return loopOf[a]
		}
		return none
	}

	// Nodes: count, carve one shared backing array, then fill.
	counts := make([]int32, len(loops))
	total := 0
	for x := range int32(len(h.orig)) {
		if li := innermost(x); li != none {
			counts[li]++
			total++
		}
	}
	backing := make([]int, total)
	off := 0
	for i := range loops {
		c := int(counts[i])
		// Full slice expression: appending to one loop's Nodes must not
		// overwrite its neighbour's.
		loops[i].Nodes = backing[off : off : off+c]
		off += c
	}
	for v := range h.n {
		x := h.num[v]
		if x == none {
			continue
		}
		if li := innermost(x); li != none {
			l := &loops[li]
			l.Nodes = append(l.Nodes, v)
			f.Innermost[v] = l
		}
	}

	// Parents and children.
	clear(counts)
	nested := 0
	for _, l := range f.Loops {
		x := h.num[l.Header]
		if a := h.absorber[x]; a != none {
			l.Parent = &loops[loopOf[a]]
			counts[loopOf[a]]++
			nested++
		}
	}
	kids := make([]*Loop, nested)
	off = 0
	for i := range loops {
		if c := int(counts[i]); c > 0 {
			loops[i].Children = kids[off : off : off+c]
			off += c
		}
	}
	for _, l := range f.Loops {
		if p := l.Parent; p != nil {
			p.Children = append(p.Children, l)
		} else {
			f.Top = append(f.Top, l)
		}
	}

	// Depth: an enclosing header is a DFS ancestor of the nested one, so
	// preorder visits parents first.
	for x := range int32(len(h.orig)) {
		if h.isHeader[x] {
			l := &loops[loopOf[x]]
			l.Depth = 1
			if l.Parent != nil {
				l.Depth = l.Parent.Depth + 1
			}
		}
	}
}

// dsu is a union-find over dense int32 ids with union by rank and path
// halving. label names each set independently of which root wins the rank
// comparison, because both users need a specific node (the DFS parent or
// the loop header) to stand for the merged set.
type dsu struct {
	up    []int32
	rank  []uint8
	label []int32
}

func (d *dsu) reset(n int) {
	if cap(d.up) < n {
		d.up = make([]int32, n)
		d.rank = make([]uint8, n)
		d.label = make([]int32, n)
	}
	d.up, d.rank, d.label = d.up[:n], d.rank[:n], d.label[:n]
	for i := range n {
		d.up[i] = int32(i)
		d.rank[i] = 0
		d.label[i] = int32(i)
	}
}

func (d *dsu) find(x int32) int32 {
	for d.up[x] != x {
		d.up[x] = d.up[d.up[x]]
		x = d.up[x]
	}
	return x
}

// lookup returns the label of x's set.
func (d *dsu) lookup(x int32) int32 { return d.label[d.find(x)] }

// union merges the sets of a and b and names the result label.
func (d *dsu) union(a, b, label int32) {
	ra, rb := d.find(a), d.find(b)
	if ra != rb {
		if d.rank[ra] < d.rank[rb] {
			ra, rb = rb, ra
		}
		d.up[rb] = ra
		if d.rank[ra] == d.rank[rb] {
			d.rank[ra]++
		}
	}
	d.label[ra] = label
}
