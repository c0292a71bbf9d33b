package profile

// stacks is the tree of the unwound stacks, frame by frame from the
// outermost, per thread: the calling-context tree at the level of
// instructions (the scope trees merge the addresses of a scope), which
// pprof's locations need. Each node counts the samples whose stack ends
// there.
type stacks struct {
	threads map[uint32]*stackNode
	// many finds the children of the nodes with more than fanScan of
	// them, by a hash of the parent and the frame (most nodes have one
	// child and are searched on their list: a map entry per node was
	// most of the pass's time and memory).
	many map[uint64]*stackNode
	// ends are the nodes stacks end at, in the order of their first
	// sample.
	ends  []stack
	nodes uint32 // made so far: the next node's id
}

// fanScan is how many children of a node are searched in their list
// before the map.
const fanScan = 8

// stackKey is a frame's place; the zero key is the [partial] root.
type stackKey struct {
	mod  *Module
	addr uint64
}

// edgeHash is the key of n's child at k in stacks.many. Two edges may
// share one: the map holds the first, the list has them all.
func edgeHash(n *stackNode, k stackKey) uint64 {
	var seq uint64
	if k.mod != nil {
		seq = uint64(k.mod.seq)
	}
	h := uint64(n.id)<<32 ^ seq
	h ^= k.addr * 0x9e3779b97f4a7c15
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

type stackNode struct {
	frame  Frame // the zero Frame for a thread's root and [partial]
	parent *stackNode
	// first is the first child, next the next sibling; nkids counts the
	// children.
	first, next *stackNode
	nkids       int32
	id          uint32
	// at is the node's places in the scope trees once fileStacks has
	// scoped it (at.merged nil before).
	at stackPlace
	// end is the samples whose stack ends here, nil when none does: most
	// nodes are inside stacks, and a tree of stacks of a profile of
	// distinct stacks holds millions.
	end *stackEnd
}

// stackEnd counts the samples ending at a node: count in all, values
// (per event) their sums, counts their number per event.
type stackEnd struct {
	count  int64
	values []int64
	counts []int64
}

func (s *stacks) child(n *stackNode, k stackKey, f Frame) *stackNode {
	var h uint64
	scan := n.nkids <= fanScan
	if !scan {
		h = edgeHash(n, k)
		c, ok := s.many[h]
		if !ok {
			return s.newChild(n, k, f, h)
		}
		if c.parent == n && c.frame.Mod == k.mod && c.frame.Addr == k.addr {
			return c
		}
		scan = true // another edge of the same hash
	}
	for c := n.first; c != nil; c = c.next {
		if c.frame.Mod == k.mod && c.frame.Addr == k.addr {
			return c
		}
	}
	return s.newChild(n, k, f, h)
}

// newChild makes n's child at k (h: its hash when n has many).
func (s *stacks) newChild(n *stackNode, k stackKey, f Frame, h uint64) *stackNode {
	// Nothing reads the children in order (ends keeps the stacks'
	// order): a new child goes first.
	s.nodes++
	c := &stackNode{frame: f, parent: n, next: n.first, id: s.nodes}
	n.first = c
	n.nkids++
	switch {
	case n.nkids == fanScan+1:
		if s.many == nil {
			s.many = map[uint64]*stackNode{}
		}
		for d := n.first; d != nil; d = d.next {
			s.putMany(edgeHash(n, stackKey{d.frame.Mod, d.frame.Addr}), d)
		}
	case n.nkids > fanScan:
		s.putMany(h, c)
	}
	return c
}

// putMany files c under h unless another edge has it.
func (s *stacks) putMany(h uint64, c *stackNode) {
	if _, ok := s.many[h]; !ok {
		s.many[h] = c
	}
}

// each calls fn for every node below the threads' roots, in no
// particular order.
func (s *stacks) each(fn func(*stackNode)) {
	var walk func(n *stackNode)
	walk = func(n *stackNode) {
		for c := n.first; c != nil; c = c.next {
			fn(c)
			walk(c)
		}
	}
	for _, r := range s.threads {
		walk(r)
	}
}

// add files one sample's stack (frames innermost first, below [partial]
// when out is not Complete) with its value w of event ev.
func (s *stacks) add(tid uint32, frames []Frame, out Outcome, ev int, w uint64) {
	if s.threads == nil {
		s.threads = map[uint32]*stackNode{}
	}
	n := s.threads[tid]
	if n == nil {
		s.nodes++
		n = &stackNode{id: s.nodes}
		s.threads[tid] = n
	}
	if out != Complete {
		n = s.child(n, stackKey{}, Frame{})
	}
	for i := len(frames) - 1; i >= 0; i-- {
		f := frames[i]
		n = s.child(n, stackKey{f.Mod, f.Addr}, f)
	}
	if n.end == nil {
		n.end = &stackEnd{}
		s.ends = append(s.ends, stack{tid, n})
	}
	e := n.end
	e.count++
	for len(e.values) <= ev {
		e.values = append(e.values, 0)
		e.counts = append(e.counts, 0)
	}
	e.values[ev] += int64(w)
	e.counts[ev]++
}

// stack is one distinct stack of one thread and its samples.
type stack struct {
	tid  uint32
	leaf *stackNode
}

// frames returns the stack's frames innermost first, and whether it
// hangs from [partial].
func (st stack) frames() ([]Frame, bool) {
	var out []Frame
	partial := false
	for n := st.leaf; n.parent != nil; n = n.parent {
		if n.frame.Mod == nil {
			partial = true
			continue
		}
		out = append(out, n.frame)
	}
	return out, partial
}

// list returns the distinct stacks in the order of their first sample.
func (s *stacks) list() []stack { return s.ends }
