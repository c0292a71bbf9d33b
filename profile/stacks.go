package profile

// stacks is the tree of the unwound stacks, frame by frame from the
// outermost, per thread: the calling-context tree at the level of
// instructions (the scope trees merge the addresses of a scope), which
// pprof's locations need. Each distinct stack counts its samples.
//
// A profile of distinct stacks (a frame-pointer perf.data of a program
// built without them) makes millions of nodes: they hold no pointers
// (numbers of nodes and modules instead), in chunks, so that the
// garbage collector neither scans nor frees them one by one.
type stacks struct {
	threads map[uint32]nodeID  // each thread's root
	nodes   chunked[stackNode] // by id
	// wide are the tables of the children of the nodes with more than
	// fanScan of them (most nodes have one child and are searched on
	// their list), by stackNode.wide-1.
	wide []edgeTable
	// ends are the distinct stacks, in the order of their first sample.
	ends chunked[stack]
	// mods are the frames' modules, by number-1; modNo numbers them.
	mods  []*Module
	modNo map[*Module]uint32
	// recentMods are the modules last numbered, recentNext the next
	// one replaced.
	recentMods [4]modNumbered
	recentNext int
	// events is how many events a profile has: each new stack's sums
	// are cut for all of them from sumArena, not allocated one by one.
	events   int
	sumArena []int64
	// seq numbers the samples filed, from 0: the one add files; a shard
	// is given the numbers of the samples it files (fileAt).
	seq uint64
	// last is each thread's last stack filed, by thread.
	last map[uint32]*lastStack
}

// lastStack is the path of a thread's last stack from its root: a
// thread's samples in a row mostly share their outer frames, which are
// then matched in this short list rather than looked up node by node
// among the children (a cache miss each in a tree of millions).
type lastStack struct {
	root nodeID
	path []step
}

// step is one node of a path: its frame (module number 0 for [partial])
// and its id.
type step struct {
	addr uint64
	mod  uint32
	id   nodeID
}

// sumChunk is how many sums sumArena is allocated by.
const sumChunk = 1 << 16

// newSums returns a stack's zeroed sums, for at least ev+1 events.
func (s *stacks) newSums(ev int) []int64 {
	n := 2 * max(s.events, ev+1)
	if n > len(s.sumArena) {
		s.sumArena = makeTouched[int64](max(sumChunk, n))
	}
	out := s.sumArena[:n:n]
	s.sumArena = s.sumArena[n:]
	return out
}

type modNumbered struct {
	m  *Module
	no uint32
}

// nodeID numbers a node from 1; 0 is none.
type nodeID uint32

// fanScan is how many children of a node are searched in their list
// before the map.
const fanScan = 8

type stackNode struct {
	addr uint64 // the frame's file address
	// parent; first is the first child, next the next sibling; nkids
	// counts the children.
	parent, first, next nodeID
	nkids               int32
	wide                uint32 // 1 + the index of its children's table in wide, 0: none (yet)
	mod                 uint32 // the frame's module's number, 0 for a thread's root and [partial]
	end                 int32  // 1 + the index in ends of the stack ending here, 0: none
	seq                 uint64 // the number of the sample that made it (shards merge by it)
}

// stack is one distinct stack of one thread and its samples: count in
// all; sums holds, per event ev, their values' sum at 2*ev and their
// number at 2*ev+1 (one allocation per stack: there are millions).
type stack struct {
	tid   uint32
	leaf  nodeID
	count int64
	sums  []int64
	seq   uint64 // the number of its first sample
}

// events is the number of events the stack has values of.
func (st *stack) events() int { return len(st.sums) / 2 }

// value is the sum of the values of event ev of the stack's samples.
func (st *stack) value(ev int) int64 { return st.sums[2*ev] }

// samples is the number of the stack's samples of event ev.
func (st *stack) samples(ev int) int64 { return st.sums[2*ev+1] }

// values lists the sums per event.
func (st *stack) values() []int64 {
	out := make([]int64, st.events())
	for ev := range out {
		out[ev] = st.value(ev)
	}
	return out
}

func (s *stacks) node(id nodeID) *stackNode { return s.nodes.at(uint32(id)) }

// frame is node n's frame; the zero Frame for a root and [partial].
func (s *stacks) frame(n *stackNode) Frame {
	if n.mod == 0 {
		return Frame{}
	}
	return Frame{Mod: s.mods[n.mod-1], Addr: n.addr}
}

// modNumber numbers m (0 for nil).
func (s *stacks) modNumber(m *Module) uint32 {
	if m == nil {
		return 0
	}
	// A stack's frames change module a few times (kernel, program,
	// libc): the last modules numbered answer most without a hash.
	for _, r := range s.recentMods {
		if r.m == m {
			return r.no
		}
	}
	k, ok := s.modNo[m]
	if !ok {
		k = s.newModNumber(m)
	}
	s.recentMods[s.recentNext%len(s.recentMods)] = modNumbered{m, k}
	s.recentNext++
	return k
}

// newModNumber numbers m, not yet numbered.
func (s *stacks) newModNumber(m *Module) uint32 {
	if s.modNo == nil {
		s.modNo = map[*Module]uint32{}
	}
	s.mods = append(s.mods, m)
	k := uint32(len(s.mods))
	s.modNo[m] = k
	return k
}

// newNode makes a node; its id.
func (s *stacks) newNode(n stackNode) nodeID { return nodeID(s.nodes.add(n)) }

// child returns p's child at frame f (module number mod), made if new.
func (s *stacks) child(p nodeID, mod uint32, f Frame) nodeID {
	pn := s.node(p)
	if pn.nkids > fanScan {
		if pn.wide == 0 {
			s.wideTable(p) // a merge of shards leaves the tables behind
			pn = s.node(p)
		}
		if c := s.wide[pn.wide-1].find(mod, f.Addr); c != 0 {
			return c
		}
		return s.newChild(p, mod, f)
	}
	for c := pn.first; c != 0; {
		cn := s.node(c)
		if cn.mod == mod && cn.addr == f.Addr {
			return c
		}
		c = cn.next
	}
	return s.newChild(p, mod, f)
}

// newChild makes p's child at f.
func (s *stacks) newChild(p nodeID, mod uint32, f Frame) nodeID {
	// Nothing reads the children in order (ends keeps the stacks'
	// order): a new child goes first.
	c := s.newNode(stackNode{addr: f.Addr, mod: mod, parent: p, next: s.node(p).first, seq: s.seq})
	pn := s.node(p)
	pn.first = c
	pn.nkids++
	switch {
	case pn.nkids == fanScan+1:
		s.wideTable(p)
	case pn.nkids > fanScan:
		s.wide[pn.wide-1].put(mod, f.Addr, c)
	}
	return c
}

// each calls fn for every node below the threads' roots, in no
// particular order.
func (s *stacks) each(fn func(*stackNode)) {
	for id := nodeID(1); uint32(id) <= s.nodes.n; id++ {
		if n := s.node(id); n.parent != 0 {
			fn(n)
		}
	}
}

// add files one sample's stack (frames innermost first, below [partial]
// when out is not Complete) with its value w of event ev; the distinct
// stack's number (from 1).
func (s *stacks) add(tid uint32, frames []Frame, out Outcome, ev int, w uint64) int32 {
	ls := s.lastOf(tid)
	n, d := ls.root, 0
	if out != Complete {
		n, d = s.next(ls, n, d, 0, 0), d+1
	}
	var last *Module
	var lastNo uint32
	for i := len(frames) - 1; i >= 0; i-- {
		f := frames[i]
		if f.Mod != last || last == nil {
			last, lastNo = f.Mod, s.modNumber(f.Mod)
		}
		n, d = s.next(ls, n, d, lastNo, f.Addr), d+1
	}
	ls.path = ls.path[:d]
	ln := s.node(n)
	if ln.end == 0 {
		ln.end = s.newEnd(stack{tid: tid, leaf: n, sums: s.newSums(ev), seq: s.seq})
	}
	s.count(ln.end, ev, w, 1)
	return ln.end
}

// count files one more sample, of value w of event ev, on distinct
// stack number k.
func (s *stacks) count(k int32, ev int, w, n uint64) {
	e := s.end(k)
	e.count += int64(n)
	if len(e.sums) <= 2*ev {
		e.sums = append(e.sums, make([]int64, 2*ev+2-len(e.sums))...)
	}
	e.sums[2*ev] += int64(w)
	e.sums[2*ev+1] += int64(n)
	s.seq++
}

// next returns the child of node n, at depth d of thread ls's stack
// being filed, at frame (mod, addr): the last stack's node while the two
// stacks agree, else found among n's children, and kept as the stack's.
func (s *stacks) next(ls *lastStack, n nodeID, d int, mod uint32, addr uint64) nodeID {
	if d < len(ls.path) {
		if st := ls.path[d]; st.mod == mod && st.addr == addr {
			return st.id
		}
		ls.path = ls.path[:d]
	}
	c := s.child(n, mod, Frame{Addr: addr})
	ls.path = append(ls.path, step{addr, mod, c})
	return c
}

// lastOf is thread tid's last stack, its root made if new.
func (s *stacks) lastOf(tid uint32) *lastStack {
	if ls, ok := s.last[tid]; ok {
		return ls
	}
	if s.threads == nil {
		s.threads = map[uint32]nodeID{}
	}
	if s.last == nil {
		s.last = map[uint32]*lastStack{}
	}
	n, ok := s.threads[tid]
	if !ok {
		n = s.newNode(stackNode{seq: s.seq})
		s.threads[tid] = n
	}
	ls := &lastStack{root: n}
	s.last[tid] = ls
	return ls
}

// frames returns stack st's frames innermost first, and whether it
// hangs from [partial].
func (s *stacks) frames(st *stack) ([]Frame, bool) {
	var out []Frame
	partial := false
	for id := st.leaf; ; {
		n := s.node(id)
		if n.parent == 0 {
			break
		}
		if n.mod == 0 {
			partial = true
		} else {
			out = append(out, s.frame(n))
		}
		id = n.parent
	}
	return out, partial
}

// newEnd keeps a distinct stack; its number (from 1).
func (s *stacks) newEnd(st stack) int32 { return int32(s.ends.add(st)) }

// end is distinct stack number k.
func (s *stacks) end(k int32) *stack { return s.ends.at(uint32(k)) }

// list calls yield with the distinct stacks in the order of their first
// sample.
func (s *stacks) list(yield func(*stack) bool) { s.ends.all(yield) }
