package profile

import "sort"

// stacks is the tree of the unwound stacks, frame by frame from the
// outermost, per thread: the calling-context tree at the level of
// instructions (the scope trees merge the addresses of a scope), which
// pprof's locations need. Each node counts the samples whose stack ends
// there.
type stacks struct {
	threads map[uint32]*stackNode
	seq     int // stacks met so far
}

// stackKey is a frame's place; the zero key is the [partial] root.
type stackKey struct {
	mod  *Module
	addr uint64
}

type stackNode struct {
	frame  Frame // the zero Frame for a thread's root and [partial]
	parent *stackNode
	kids   map[stackKey]*stackNode
	// count and values (per event) are the samples ending here; seq
	// orders the stacks by their first sample.
	count  int64
	values []int64
	seq    int
}

func (n *stackNode) child(k stackKey, f Frame) *stackNode {
	if c, ok := n.kids[k]; ok {
		return c
	}
	if n.kids == nil {
		n.kids = map[stackKey]*stackNode{}
	}
	c := &stackNode{frame: f, parent: n}
	n.kids[k] = c
	return c
}

// add files one sample's stack (frames innermost first, below [partial]
// when out is not Complete) with its value w of event ev.
func (s *stacks) add(tid uint32, frames []Frame, out Outcome, ev int, w uint64) {
	if s.threads == nil {
		s.threads = map[uint32]*stackNode{}
	}
	n := s.threads[tid]
	if n == nil {
		n = &stackNode{}
		s.threads[tid] = n
	}
	if out != Complete {
		n = n.child(stackKey{}, Frame{})
	}
	for i := len(frames) - 1; i >= 0; i-- {
		f := frames[i]
		n = n.child(stackKey{f.Mod, f.Addr}, f)
	}
	if n.count == 0 {
		s.seq++
		n.seq = s.seq
	}
	n.count++
	for len(n.values) <= ev {
		n.values = append(n.values, 0)
	}
	n.values[ev] += int64(w)
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
func (s *stacks) list() []stack {
	var out []stack
	var walk func(tid uint32, n *stackNode)
	walk = func(tid uint32, n *stackNode) {
		if n.count > 0 {
			out = append(out, stack{tid, n})
		}
		for _, c := range n.kids {
			walk(tid, c)
		}
	}
	for tid, root := range s.threads {
		walk(tid, root)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].leaf.seq < out[j].leaf.seq })
	return out
}
