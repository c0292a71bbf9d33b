package havlak

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// graph builds successor lists from an edge list.
func graph(n int, edges ...[2]int) [][]int {
	succs := make([][]int, n)
	for _, e := range edges {
		succs[e[0]] = append(succs[e[0]], e[1])
	}
	return succs
}

// want describes one expected loop. parent is the parent's header, -1 for a
// top-level loop.
type want struct {
	header int
	nodes  []int
	parent int
	irr    bool
	depth  int
}

// checkWant compares f against the expected loops (sorted by header) exactly,
// including Top, Children and Innermost.
func checkWant(t *testing.T, f *Forest, n int, wants []want) {
	t.Helper()
	if len(f.Innermost) != n {
		t.Fatalf("len(Innermost) = %d, want %d", len(f.Innermost), n)
	}
	if len(f.Loops) != len(wants) {
		t.Fatalf("got %d loops, want %d:\n%s", len(f.Loops), len(wants), dump(f))
	}
	inner := make([]int, n)
	for i := range inner {
		inner[i] = -1
	}
	var top []int
	kids := map[int][]int{}
	for i, w := range wants {
		l := f.Loops[i]
		parent := -1
		if l.Parent != nil {
			parent = l.Parent.Header
		}
		if l.Header != w.header || !slices.Equal(l.Nodes, w.nodes) || parent != w.parent ||
			l.Irreducible != w.irr || l.Depth != w.depth {
			t.Errorf("loop %d = {header %d nodes %v parent %d irr %v depth %d}, want %+v",
				i, l.Header, l.Nodes, parent, l.Irreducible, l.Depth, w)
		}
		for _, v := range w.nodes {
			inner[v] = w.header
		}
		if w.parent < 0 {
			top = append(top, w.header)
		} else {
			kids[w.parent] = append(kids[w.parent], w.header)
		}
	}
	var gotTop []int
	for _, l := range f.Top {
		gotTop = append(gotTop, l.Header)
	}
	if !slices.Equal(gotTop, top) {
		t.Errorf("Top = %v, want %v", gotTop, top)
	}
	for _, l := range f.Loops {
		var got []int
		for _, c := range l.Children {
			got = append(got, c.Header)
		}
		if !slices.Equal(got, kids[l.Header]) {
			t.Errorf("loop %d children = %v, want %v", l.Header, got, kids[l.Header])
		}
	}
	for v, l := range f.Innermost {
		got := -1
		if l != nil {
			got = l.Header
		}
		if got != inner[v] {
			t.Errorf("Innermost[%d] = loop %d, want %d", v, got, inner[v])
		}
	}
}

func TestHandBuilt(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		entry int
		succs [][]int
		want  []want
	}{
		{
			name:  "dag",
			n:     5,
			succs: graph(5, [2]int{0, 1}, [2]int{0, 2}, [2]int{1, 3}, [2]int{2, 3}, [2]int{0, 3}, [2]int{3, 4}),
			want:  nil,
		},
		{
			name:  "while loop",
			n:     4,
			succs: graph(4, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 1}, [2]int{1, 3}),
			want:  []want{{1, []int{1, 2}, -1, false, 1}},
		},
		{
			name:  "self loop",
			n:     3,
			succs: graph(3, [2]int{0, 1}, [2]int{1, 1}, [2]int{1, 2}),
			want:  []want{{1, []int{1}, -1, false, 1}},
		},
		{
			name:  "self loop on entry",
			n:     2,
			succs: graph(2, [2]int{0, 0}, [2]int{0, 1}),
			want:  []want{{0, []int{0}, -1, false, 1}},
		},
		{
			name:  "entry is the header",
			n:     3,
			succs: graph(3, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 0}),
			want:  []want{{0, []int{0, 1, 2}, -1, false, 1}},
		},
		{
			name: "two sequential loops",
			n:    6,
			succs: graph(6, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 1}, [2]int{1, 3},
				[2]int{3, 4}, [2]int{4, 3}, [2]int{3, 5}),
			want: []want{
				{1, []int{1, 2}, -1, false, 1},
				{3, []int{3, 4}, -1, false, 1},
			},
		},
		{
			name: "triply nested",
			n:    8,
			succs: graph(8, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 3}, [2]int{3, 4},
				[2]int{4, 3}, [2]int{4, 5}, [2]int{5, 2}, [2]int{5, 6}, [2]int{6, 1}, [2]int{6, 7}),
			want: []want{
				{1, []int{1, 6}, -1, false, 1},
				{2, []int{2, 5}, 1, false, 2},
				{3, []int{3, 4}, 2, false, 3},
			},
		},
		{
			// Three back edges (one duplicated) into header 1 form one loop.
			name: "multiple back edges to one header",
			n:    5,
			succs: graph(5, [2]int{0, 1}, [2]int{1, 2}, [2]int{1, 3}, [2]int{2, 1}, [2]int{2, 1},
				[2]int{3, 1}, [2]int{3, 4}),
			want: []want{{1, []int{1, 2, 3}, -1, false, 1}},
		},
		{
			// for (1) { 2: if c break; 3: if d continue; 4 } 5 exit
			name: "break and continue",
			n:    6,
			succs: graph(6, [2]int{0, 1}, [2]int{1, 2}, [2]int{1, 5}, [2]int{2, 5}, [2]int{2, 3},
				[2]int{3, 1}, [2]int{3, 4}, [2]int{4, 1}),
			want: []want{{1, []int{1, 2, 3, 4}, -1, false, 1}},
		},
		{
			name: "diamond inside loop",
			n:    6,
			succs: graph(6, [2]int{0, 1}, [2]int{1, 2}, [2]int{1, 3}, [2]int{2, 4}, [2]int{3, 4},
				[2]int{4, 1}, [2]int{4, 5}),
			want: []want{{1, []int{1, 2, 3, 4}, -1, false, 1}},
		},
		{
			// entry->a, entry->b, a->b, b->a: DFS reaches a first, so a is
			// the header and the forward edge entry->b is the second entry.
			name:  "classic irreducible",
			n:     3,
			succs: graph(3, [2]int{0, 1}, [2]int{0, 2}, [2]int{1, 2}, [2]int{2, 1}),
			want:  []want{{1, []int{1, 2}, -1, true, 1}},
		},
		{
			// Same graph, successors listed the other way round: DFS now
			// reaches b first and picks it as header.
			name:  "classic irreducible, other DFS order",
			n:     3,
			succs: graph(3, [2]int{0, 2}, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 1}),
			want:  []want{{2, []int{1, 2}, -1, true, 1}},
		},
		{
			// Outer reducible loop 1 (latch 4) containing the irreducible
			// pair {2,3}, entered at 2 (tree edge) and at 3 (1->3).
			name: "irreducible inside reducible",
			n:    6,
			succs: graph(6, [2]int{0, 1}, [2]int{1, 2}, [2]int{1, 3}, [2]int{2, 3}, [2]int{3, 2},
				[2]int{3, 4}, [2]int{4, 1}, [2]int{4, 5}),
			want: []want{
				{1, []int{1, 4}, -1, false, 1},
				{2, []int{2, 3}, 1, true, 2},
			},
		},
		{
			// Irreducible region {1,2,3,4} (entered at 1 and 2) with the
			// reducible loop {3,4} nested inside it.
			name: "reducible inside irreducible",
			n:    6,
			succs: graph(6, [2]int{0, 1}, [2]int{0, 2}, [2]int{1, 2}, [2]int{2, 3}, [2]int{3, 4},
				[2]int{4, 3}, [2]int{4, 1}, [2]int{3, 5}),
			want: []want{
				{1, []int{1, 2}, -1, true, 1},
				{3, []int{3, 4}, 1, false, 2},
			},
		},
		{
			// The cross edge 5->4 (LCA 1) enters the inner loop {3,4} from
			// outside it, but is an ordinary body edge of the outer loop.
			name: "cross edge into nested loop",
			n:    8,
			succs: graph(8, [2]int{0, 1}, [2]int{1, 2}, [2]int{1, 5}, [2]int{2, 3}, [2]int{3, 4},
				[2]int{4, 3}, [2]int{4, 6}, [2]int{5, 4}, [2]int{6, 1}, [2]int{6, 7}),
			want: []want{
				{1, []int{1, 2, 5, 6}, -1, false, 1},
				{3, []int{3, 4}, 1, true, 2},
			},
		},
		{
			// The cross edge 4->3 has LCA 0, outside every loop, so it makes
			// both nested loops irreducible.
			name: "cross edge into two nested loops",
			n:    6,
			succs: graph(6, [2]int{0, 1}, [2]int{0, 4}, [2]int{1, 2}, [2]int{2, 3}, [2]int{3, 2},
				[2]int{3, 1}, [2]int{4, 3}, [2]int{3, 5}),
			want: []want{
				{1, []int{1}, -1, true, 1},
				{2, []int{2, 3}, 1, true, 2},
			},
		},
		{
			// 3,4 form a cycle and 4->1 enters the loop, but none of them is
			// reachable from the entry; 5 is isolated.
			name: "unreachable nodes",
			n:    6,
			succs: graph(6, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 1}, [2]int{3, 4}, [2]int{4, 3},
				[2]int{4, 1}, [2]int{4, 4}),
			want: []want{{1, []int{1, 2}, -1, false, 1}},
		},
		{
			name:  "entry not zero",
			n:     4,
			entry: 3,
			succs: graph(4, [2]int{3, 1}, [2]int{1, 2}, [2]int{2, 1}, [2]int{0, 0}),
			want:  []want{{1, []int{1, 2}, -1, false, 1}},
		},
		{
			name:  "out of range successors ignored",
			n:     3,
			succs: [][]int{{-1, 1, 3, 99}, {0, -5, 2}, {1 << 40}},
			want:  []want{{0, []int{0, 1}, -1, false, 1}},
		},
		{
			name:  "short succs",
			n:     4,
			succs: [][]int{{1}, {0, 3}},
			want:  []want{{0, []int{0, 1}, -1, false, 1}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := Find(tc.n, tc.entry, tc.succs)
			checkWant(t, f, tc.n, tc.want)
			checkInvariants(t, tc.n, tc.entry, tc.succs, f)
			checkReference(t, tc.n, tc.entry, tc.succs, f)
		})
	}
}

func TestBadEntry(t *testing.T) {
	succs := graph(3, [2]int{0, 1}, [2]int{1, 0})
	for _, tc := range []struct{ n, entry, wantLen int }{
		{3, -1, 3}, {3, 3, 3}, {3, 1 << 40, 3}, {0, 0, 0}, {-4, 0, 0},
	} {
		f := Find(tc.n, tc.entry, succs)
		if len(f.Loops) != 0 || len(f.Top) != 0 || len(f.Innermost) != tc.wantLen {
			t.Errorf("Find(%d, %d) = %d loops, %d top, %d innermost; want empty with %d",
				tc.n, tc.entry, len(f.Loops), len(f.Top), len(f.Innermost), tc.wantLen)
		}
		for _, l := range f.Innermost {
			if l != nil {
				t.Errorf("Find(%d, %d): non-nil Innermost", tc.n, tc.entry)
			}
		}
	}
	if f := Find(2, 0, nil); len(f.Loops) != 0 || len(f.Innermost) != 2 {
		t.Errorf("nil succs: got %d loops", len(f.Loops))
	}
}

// builder allocates nodes sequentially, for generated graphs.
type builder struct{ succs [][]int }

func (b *builder) node() int {
	b.succs = append(b.succs, nil)
	return len(b.succs) - 1
}

func (b *builder) edge(from, to int) { b.succs[from] = append(b.succs[from], to) }

func (b *builder) diamond(top int) int {
	l, r, bot := b.node(), b.node(), b.node()
	b.edge(top, l)
	b.edge(top, r)
	b.edge(l, bot)
	b.edge(r, bot)
	return bot
}

// baseLoop is Hundt's base loop hanging off from: a loop headed at from that
// contains two diamond loops. It returns the exit node. 3 loops, depth 2.
func (b *builder) baseLoop(from int) int {
	header := b.node()
	b.edge(from, header)
	d1 := b.diamond(header)
	d11 := b.node()
	b.edge(d1, d11)
	d2 := b.diamond(d11)
	footer := b.node()
	b.edge(d2, footer)
	b.edge(d2, d11)
	b.edge(d1, header)
	b.edge(footer, from)
	exit := b.node()
	b.edge(footer, exit)
	return exit
}

// nest builds a loop around width sequential nest(level-1), bottoming out in
// base loops. It returns the exit node.
func (b *builder) nest(from, level, width int) int {
	if level == 0 {
		return b.baseLoop(from)
	}
	top := b.node()
	b.edge(from, top)
	n := b.node() // keeps the first child's header distinct from top
	b.edge(top, n)
	for range width {
		n = b.nest(n, level-1, width)
	}
	b.edge(n, top)
	bottom := b.node()
	b.edge(n, bottom)
	return bottom
}

// nestedDiamonds builds trees parallel branches from the entry (node 0) to a
// common exit, each a sequence of seq nests, and returns the graph with its
// expected loop count and maximum depth.
func nestedDiamonds(trees, seq, levels, width int) (succs [][]int, loops, depth int) {
	var b builder
	entry, exit := b.node(), b.node()
	for range trees {
		n := b.node()
		b.edge(entry, n)
		for range seq {
			n = b.nest(n, levels, width)
		}
		b.edge(n, exit)
	}
	perNest, depth := 3, 2
	for range levels {
		perNest = 1 + width*perNest
		depth++
	}
	return b.succs, trees * seq * perNest, depth
}

// hundtGraph is exactly the graph of Hundt's "Loop Recognition in
// C++/Java/Go/Scala" benchmark (LoopTesterApp), including its quirk of
// reusing the node ids of the warm-up base loop.
func hundtGraph() [][]int {
	var succs [][]int
	touch := func(i int) {
		for len(succs) <= i {
			succs = append(succs, nil)
		}
	}
	connect := func(s, e int) {
		touch(s)
		touch(e)
		succs[s] = append(succs[s], e)
	}
	straight := func(start, n int) int {
		for i := range n {
			connect(start+i, start+i+1)
		}
		return start + n
	}
	diamond := func(start int) int {
		connect(start, start+1)
		connect(start, start+2)
		connect(start+1, start+3)
		connect(start+2, start+3)
		return start + 3
	}
	baseLoop := func(from int) int {
		header := straight(from, 1)
		diamond1 := diamond(header)
		d11 := straight(diamond1, 1)
		diamond2 := diamond(d11)
		footer := straight(diamond2, 1)
		connect(diamond2, d11)
		connect(diamond1, header)
		connect(footer, from)
		return straight(footer, 1)
	}
	touch(0)
	baseLoop(0)
	touch(1)
	connect(0, 2)
	n := 2
	for range 10 {
		touch(n + 1)
		connect(2, n+1)
		n++
		for range 100 {
			top := n
			n = straight(n, 1)
			for range 25 {
				n = baseLoop(n)
			}
			bottom := straight(n, 1)
			connect(n, top)
			n = bottom
		}
		connect(n, 1)
	}
	return succs
}

func maxDepth(f *Forest) int {
	d := 0
	for _, l := range f.Loops {
		d = max(d, l.Depth)
	}
	return d
}

func TestHundtGraph(t *testing.T) {
	succs := hundtGraph()
	f := Find(len(succs), 0, succs)
	// The benchmark reports 76002 loops including its artificial root.
	if got := len(f.Loops); got != 76001 {
		t.Errorf("got %d loops, want 76001", got)
	}
	// The warm-up loop's back edge 9->0 wraps everything in one top loop
	// headed at 0, which puts the diamond loops at depth 5; its stray edge
	// 0->2 enters the loops headed at 1 and 4 (the reference check below
	// confirms both numbers independently).
	if got := maxDepth(f); got != 5 {
		t.Errorf("max depth %d, want 5", got)
	}
	if len(f.Top) != 1 || f.Top[0].Header != 0 {
		t.Errorf("got %d top loops, want 1 headed at 0", len(f.Top))
	}
	var irr []int
	for _, l := range f.Loops {
		if l.Irreducible {
			irr = append(irr, l.Header)
		}
	}
	if !slices.Equal(irr, []int{1, 4}) {
		t.Errorf("irreducible headers %v, want [1 4]", irr)
	}
	if !testing.Short() {
		checkInvariants(t, len(succs), 0, succs, f)
		checkReference(t, len(succs), 0, succs, f)
	}
}

func TestNestedDiamonds(t *testing.T) {
	for _, tc := range []struct{ trees, seq, levels, width int }{
		{1, 1, 0, 0},
		{2, 3, 1, 2},
		{10, 10, 3, 4}, // ~68k nodes
	} {
		succs, loops, depth := nestedDiamonds(tc.trees, tc.seq, tc.levels, tc.width)
		f := Find(len(succs), 0, succs)
		if len(f.Loops) != loops || maxDepth(f) != depth {
			t.Errorf("%+v (%d nodes): got %d loops depth %d, want %d loops depth %d",
				tc, len(succs), len(f.Loops), maxDepth(f), loops, depth)
		}
		checkInvariants(t, len(succs), 0, succs, f)
		if len(succs) < 1000 || !testing.Short() {
			checkReference(t, len(succs), 0, succs, f)
		}
	}
}

func TestDeepChain(t *testing.T) {
	const n = 200_000
	succs := make([][]int, n)
	for i := range n - 1 {
		succs[i] = []int{i + 1}
	}
	succs[n-1] = []int{0}
	f := Find(n, 0, succs)
	if len(f.Loops) != 1 || f.Loops[0].Header != 0 || len(f.Loops[0].Nodes) != n || f.Loops[0].Irreducible {
		t.Fatalf("chain: got %d loops", len(f.Loops))
	}

	// The same chain with a back edge from the tail to the middle: only the
	// second half loops.
	succs[n-1] = []int{n / 2}
	f = Find(n, 0, succs)
	if len(f.Loops) != 1 || f.Loops[0].Header != n/2 || len(f.Loops[0].Nodes) != n/2 ||
		f.Innermost[n/2-1] != nil || f.Innermost[n-1] != f.Loops[0] {
		t.Fatalf("half chain: got %d loops", len(f.Loops))
	}
}

// TestDeepNesting builds 100k perfectly nested loops: node i -> i+1 along a
// chain of 2k nodes, and node 2k-1-i -> i closes loop i.
func TestDeepNesting(t *testing.T) {
	const k = 100_000
	n := 2 * k
	succs := make([][]int, n)
	for i := range n - 1 {
		succs[i] = []int{i + 1}
	}
	for i := range k {
		succs[n-1-i] = append(succs[n-1-i], i)
	}
	f := Find(n, 0, succs)
	if len(f.Loops) != k || len(f.Top) != 1 || maxDepth(f) != k {
		t.Fatalf("got %d loops, %d top, depth %d", len(f.Loops), len(f.Top), maxDepth(f))
	}
	for i, l := range f.Loops {
		if l.Header != i || !slices.Equal(l.Nodes, []int{i, n - 1 - i}) || l.Depth != i+1 {
			t.Fatalf("loop %d: header %d nodes %v depth %d", i, l.Header, l.Nodes, l.Depth)
		}
	}
	if all := f.Top[0].AllNodes(); len(all) != n {
		t.Fatalf("AllNodes: %d nodes", len(all))
	}
}

// TestManyEntriesIntoDeepNest is the input on which Havlak's original
// formulation goes quadratic: k perfectly nested loops (as in TestDeepNesting)
// and k side nodes that each jump into the innermost loop body from outside,
// making every loop irreducible. Re-appending each entry edge at every level
// would cost k*k = 2.5e9 steps here; this must finish in milliseconds.
func TestManyEntriesIntoDeepNest(t *testing.T) {
	const k = 50_000
	n := 2*k + k + 1 // chain, side nodes, entry
	entry := n - 1
	succs := make([][]int, n)
	for i := range 2*k - 1 {
		succs[i] = []int{i + 1}
	}
	for i := range k {
		succs[2*k-1-i] = append(succs[2*k-1-i], i)
	}
	succs[entry] = []int{0} // the DFS walks the nest first
	for j := range k {
		side := 2*k + j
		succs[entry] = append(succs[entry], side)
		succs[side] = []int{k} // k is in the innermost loop but not its header
	}
	f := Find(n, entry, succs)
	if len(f.Loops) != k || maxDepth(f) != k {
		t.Fatalf("got %d loops depth %d, want %d", len(f.Loops), maxDepth(f), k)
	}
	for _, l := range f.Loops {
		if !l.Irreducible {
			t.Fatalf("loop %d not irreducible", l.Header)
		}
	}
	for j := range k {
		if f.Innermost[2*k+j] != nil {
			t.Fatalf("side node %d in a loop", 2*k+j)
		}
	}
}

// randomGraph returns a random graph with nodes 0..n-1. Some kinds bias it
// towards structured control flow with extra edges (which produce
// irreducible and multi-level loops); all include self-loops, duplicate
// edges and dangling successors.
func randomGraph(r *rand.Rand, n, kind int) [][]int {
	succs := make([][]int, n)
	add := func(a, b int) { succs[a] = append(succs[a], b) }
	switch kind {
	case 0: // uniform
		m := r.IntN(3*n + 1)
		for range m {
			add(r.IntN(n), r.IntN(n))
		}
	case 1: // mostly forward chain with a few back edges
		for i := range n - 1 {
			add(i, i+1)
			if r.IntN(3) == 0 {
				add(i, i+1+r.IntN(n-i-1))
			}
		}
		for range 1 + r.IntN(n/3+1) {
			a := r.IntN(n)
			add(a, r.IntN(a+1))
		}
	case 2: // nested loop skeleton plus random cross edges
		for i := range n - 1 {
			add(i, i+1)
		}
		for i := 0; i < n/2; i += 1 + r.IntN(3) {
			add(n-1-i-r.IntN(2), i)
		}
		for range r.IntN(n/2 + 1) {
			add(r.IntN(n), r.IntN(n))
		}
	}
	if r.IntN(4) == 0 {
		add(r.IntN(n), n+r.IntN(3))
		add(r.IntN(n), -1)
	}
	for _, s := range succs {
		r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	}
	return succs
}

func TestRandomGraphs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 3000 {
		n := 1 + r.IntN(40)
		if iter%100 == 0 {
			n = 500 + r.IntN(2000)
		}
		kind := iter % 3
		succs := randomGraph(r, n, kind)
		entry := r.IntN(n)
		f := Find(n, entry, succs)
		name := fmt.Sprintf("iter %d kind %d n %d", iter, kind, n)
		t.Run(name, func(t *testing.T) {
			checkInvariants(t, n, entry, succs, f)
			checkReference(t, n, entry, succs, f)
		})
		if t.Failed() {
			t.Logf("graph: entry %d succs %v", entry, succs)
			return
		}
	}
}

// checkInvariants verifies structural properties of f that hold for any
// correct loop nesting forest, independently of how headers were chosen.
func checkInvariants(t *testing.T, n, entry int, succs [][]int, f *Forest) {
	t.Helper()
	if len(f.Innermost) != n {
		t.Fatalf("len(Innermost) = %d, want %d", len(f.Innermost), n)
	}
	valid := func(v int) bool { return v >= 0 && v < n }
	succ := func(v int) []int {
		if v < len(succs) {
			return succs[v]
		}
		return nil
	}
	reach := make([]bool, n)
	stack := []int{entry}
	reach[entry] = true
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range succ(v) {
			if valid(w) && !reach[w] {
				reach[w] = true
				stack = append(stack, w)
			}
		}
	}
	preds := make([][]int, n)
	for v := range n {
		for _, w := range succ(v) {
			if valid(w) && reach[v] {
				preds[w] = append(preds[w], v)
			}
		}
	}

	owner := make([]*Loop, n)
	var top []*Loop
	for i, l := range f.Loops {
		if i > 0 && f.Loops[i-1].Header >= l.Header {
			t.Fatalf("Loops not sorted by header")
		}
		if !slices.Contains(l.Nodes, l.Header) {
			t.Errorf("loop %d: header not in Nodes %v", l.Header, l.Nodes)
		}
		for j, v := range l.Nodes {
			if j > 0 && l.Nodes[j-1] >= v {
				t.Errorf("loop %d: Nodes not strictly ascending: %v", l.Header, l.Nodes)
			}
			if !valid(v) || !reach[v] {
				t.Errorf("loop %d: node %d unreachable or invalid", l.Header, v)
				continue
			}
			if owner[v] != nil {
				t.Errorf("node %d in Nodes of both %d and %d", v, owner[v].Header, l.Header)
			}
			owner[v] = l
		}
		if l.Parent == nil {
			top = append(top, l)
			if l.Depth != 1 {
				t.Errorf("top loop %d has depth %d", l.Header, l.Depth)
			}
		} else {
			if l.Depth != l.Parent.Depth+1 {
				t.Errorf("loop %d depth %d, parent depth %d", l.Header, l.Depth, l.Parent.Depth)
			}
			if c := slices.Index(l.Parent.Children, l); c < 0 {
				t.Errorf("loop %d missing from parent %d's Children", l.Header, l.Parent.Header)
			}
		}
		for j, c := range l.Children {
			if c.Parent != l {
				t.Errorf("child %d of %d has another parent", c.Header, l.Header)
			}
			if j > 0 && l.Children[j-1].Header >= c.Header {
				t.Errorf("loop %d: Children not sorted", l.Header)
			}
		}
	}
	if !slices.Equal(top, f.Top) {
		t.Errorf("Top does not match the parentless loops")
	}
	for v, l := range f.Innermost {
		if l != owner[v] {
			t.Errorf("Innermost[%d] inconsistent with Nodes", v)
		}
	}

	// Every reachable node on a cycle must be in some loop, and each loop
	// body must be strongly connected.
	in := make([]int, n) // stamp: in[v] == i+1 means v in loop i
	for i, l := range f.Loops {
		all := l.AllNodes()
		if !slices.IsSorted(all) {
			t.Errorf("loop %d: AllNodes not sorted", l.Header)
		}
		for _, v := range all {
			in[v] = i + 1
		}
		stamp := i + 1
		for _, adj := range []func(int) []int{succ, func(v int) []int { return preds[v] }} {
			seen := map[int]bool{l.Header: true}
			stack := []int{l.Header}
			for len(stack) > 0 {
				v := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				for _, w := range adj(v) {
					if valid(w) && in[w] == stamp && !seen[w] {
						seen[w] = true
						stack = append(stack, w)
					}
				}
			}
			if len(seen) != len(all) {
				t.Errorf("loop %d: body %v not strongly connected", l.Header, all)
				break
			}
		}
		if len(all) == 1 && !slices.Contains(succ(l.Header), l.Header) {
			t.Errorf("loop %d: single node without self-loop", l.Header)
		}
	}

	// Determinism.
	if a, b := dump(f), dump(Find(n, entry, succs)); a != b {
		t.Errorf("two runs differ:\n%s\n---\n%s", a, b)
	}
}

// dump renders f canonically, for comparisons and failure messages.
func dump(f *Forest) string {
	var sb strings.Builder
	for _, l := range f.Loops {
		p := -1
		if l.Parent != nil {
			p = l.Parent.Header
		}
		var kids []int
		for _, c := range l.Children {
			kids = append(kids, c.Header)
		}
		fmt.Fprintf(&sb, "loop %d nodes %v parent %d kids %v irr %v depth %d\n",
			l.Header, l.Nodes, p, kids, l.Irreducible, l.Depth)
	}
	for v, l := range f.Innermost {
		if l != nil {
			fmt.Fprintf(&sb, "%d:%d ", v, l.Header)
		}
	}
	return sb.String()
}

// refLoop is one loop computed by reference.
type refLoop struct {
	header, parent, depth int
	all, nodes            []int
	irr                   bool
}

// reference computes Havlak's forest from its structural characterisation
// (Ramalingam, "On Loops, Dominators, and Dominance Frontiers"), sharing no
// code with the implementation: the top-level loops are the cyclic strongly
// connected components of the reachable graph, each headed by its first node
// in DFS preorder; the children of a loop with header h are the cyclic SCCs
// of the loop's nodes minus h, recursively. A loop is irreducible when a node
// other than its header has a reachable predecessor outside the loop. It is
// quadratic-ish and recursive: for tests only.
func reference(n, entry int, succs [][]int) []refLoop {
	adj := make([][]int, n)
	for v := range min(n, len(succs)) {
		for _, w := range succs[v] {
			if w >= 0 && w < n {
				adj[v] = append(adj[v], w)
			}
		}
	}
	pre := make([]int, n)
	for i := range pre {
		pre[i] = -1
	}
	counter := 0
	var dfs func(v int)
	dfs = func(v int) {
		pre[v] = counter
		counter++
		for _, w := range adj[v] {
			if pre[w] < 0 {
				dfs(w)
			}
		}
	}
	dfs(entry)
	preds := make([][]int, n)
	var reached []int
	for v := range n {
		if pre[v] < 0 {
			continue
		}
		reached = append(reached, v)
		for _, w := range adj[v] {
			preds[w] = append(preds[w], v)
		}
	}

	// Tarjan's SCC over the subgraph induced by the nodes with member == gen.
	member := make([]int, n)
	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	gen := 0
	sccs := func(set []int) [][]int {
		gen++
		for _, v := range set {
			member[v] = gen
			index[v] = -1
		}
		var out [][]int
		var stack []int
		idx := 0
		var strong func(v int)
		strong = func(v int) {
			index[v], low[v] = idx, idx
			idx++
			stack = append(stack, v)
			onStack[v] = true
			for _, w := range adj[v] {
				if member[w] != gen {
					continue
				}
				if index[w] < 0 {
					strong(w)
					low[v] = min(low[v], low[w])
				} else if onStack[w] {
					low[v] = min(low[v], index[w])
				}
			}
			if low[v] == index[v] {
				var c []int
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					c = append(c, w)
					if w == v {
						break
					}
				}
				out = append(out, c)
			}
		}
		for _, v := range set {
			if index[v] < 0 {
				strong(v)
			}
		}
		return out
	}

	var loops []refLoop
	var decompose func(set []int, parent, depth int) [][]int
	// decompose records the loops within set and returns their node sets.
	decompose = func(set []int, parent, depth int) [][]int {
		var alls [][]int
		for _, c := range sccs(set) {
			if len(c) == 1 && !slices.Contains(adj[c[0]], c[0]) {
				continue
			}
			h := c[0]
			for _, v := range c {
				if pre[v] < pre[h] {
					h = v
				}
			}
			slices.Sort(c)
			inC := map[int]bool{}
			for _, v := range c {
				inC[v] = true
			}
			irr := false
			for _, v := range c {
				for _, p := range preds[v] {
					if v != h && !inC[p] {
						irr = true
					}
				}
			}
			i := len(loops)
			loops = append(loops, refLoop{header: h, parent: parent, depth: depth, all: c, irr: irr})
			rest := slices.DeleteFunc(slices.Clone(c), func(v int) bool { return v == h })
			inner := map[int]bool{}
			for _, a := range decompose(rest, h, depth+1) {
				for _, v := range a {
					inner[v] = true
				}
			}
			for _, v := range c {
				if !inner[v] {
					loops[i].nodes = append(loops[i].nodes, v)
				}
			}
			alls = append(alls, c)
		}
		return alls
	}
	decompose(reached, -1, 1)
	slices.SortFunc(loops, func(a, b refLoop) int { return a.header - b.header })
	return loops
}

// checkReference compares f against reference exactly.
func checkReference(t *testing.T, n, entry int, succs [][]int, f *Forest) {
	t.Helper()
	ref := reference(n, entry, succs)
	if len(ref) != len(f.Loops) {
		t.Fatalf("got %d loops, reference has %d:\n%s", len(f.Loops), len(ref), dump(f))
	}
	for i, r := range ref {
		l := f.Loops[i]
		p := -1
		if l.Parent != nil {
			p = l.Parent.Header
		}
		if l.Header != r.header || p != r.parent || l.Depth != r.depth || l.Irreducible != r.irr ||
			!slices.Equal(l.Nodes, r.nodes) || !slices.Equal(l.AllNodes(), r.all) {
			t.Fatalf("loop %d differs from reference %+v:\n%s", i, r, dump(f))
		}
	}
}

func BenchmarkFind(b *testing.B) {
	succs := hundtGraph()
	edges := 0
	for _, s := range succs {
		edges += len(s)
	}
	b.ReportAllocs()
	for b.Loop() {
		Find(len(succs), 0, succs)
	}
	b.ReportMetric(float64(len(succs)), "nodes")
	b.ReportMetric(float64(edges), "edges")
}
