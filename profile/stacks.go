package profile

// stacks is the tree of the unwound stacks, frame by frame from the
// outermost, per thread: the calling-context tree at the level of
// instructions (the scope trees merge the addresses of a scope), which
// pprof's locations need. Each node counts the samples whose stack ends
// there.
type stacks struct {
	threads map[uint32]*stackNode
	// kids holds every node below its parent (one map for the tree: most
	// nodes have one child).
	kids map[stackEdge]*stackNode
	// ends are the nodes stacks end at, in the order of their first
	// sample.
	ends []stack
}

// stackKey is a frame's place; the zero key is the [partial] root.
type stackKey struct {
	mod  *Module
	addr uint64
}

type stackEdge struct {
	parent *stackNode
	key    stackKey
}

type stackNode struct {
	frame  Frame // the zero Frame for a thread's root and [partial]
	parent *stackNode
	// count and values (per event) are the samples ending here, counts
	// their number per event.
	count  int64
	values []int64
	counts []int64
}

func (s *stacks) child(n *stackNode, k stackKey, f Frame) *stackNode {
	e := stackEdge{n, k}
	if c, ok := s.kids[e]; ok {
		return c
	}
	c := &stackNode{frame: f, parent: n}
	s.kids[e] = c
	return c
}

// add files one sample's stack (frames innermost first, below [partial]
// when out is not Complete) with its value w of event ev.
func (s *stacks) add(tid uint32, frames []Frame, out Outcome, ev int, w uint64) {
	if s.threads == nil {
		s.threads, s.kids = map[uint32]*stackNode{}, map[stackEdge]*stackNode{}
	}
	n := s.threads[tid]
	if n == nil {
		n = &stackNode{}
		s.threads[tid] = n
	}
	if out != Complete {
		n = s.child(n, stackKey{}, Frame{})
	}
	for i := len(frames) - 1; i >= 0; i-- {
		f := frames[i]
		n = s.child(n, stackKey{f.Mod, f.Addr}, f)
	}
	if n.count == 0 {
		s.ends = append(s.ends, stack{tid, n})
	}
	n.count++
	for len(n.values) <= ev {
		n.values = append(n.values, 0)
		n.counts = append(n.counts, 0)
	}
	n.values[ev] += int64(w)
	n.counts[ev]++
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
