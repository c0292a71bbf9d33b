package profile

import "fmt"

// A Path is one sample's call path and value: what every Source gives
// the one insertion, whatever it read (a recording's unwound stacks,
// perf's callchains, hpcrun's calling-context trees).
type Path struct {
	Tid    uint32
	Frames []Frame // innermost first
	// Out is how far the path got: below Complete it hangs from the
	// [partial] root.
	Out Outcome
	// Scopes are the path's scopes, outermost first, when the source
	// placed them itself (hpcrun's placeholder nodes have no frame); nil:
	// the frames' scopes.
	Scopes []*Elem
	Event  int    // index in Meta.EventNames
	Value  uint64 // 1 a sample in bloop's recordings, else its period or metric value
}

// insert files one path in the calling-context trees, when it is of
// their event, and in the tree of stacks pprof's profile is made from.
func (p *Profile) insert(x Path) {
	if !p.count(&x) {
		return
	}
	ev, w := x.Event, x.Value
	if p.deferScopes && x.Scopes == nil {
		// Scoped once per distinct stack, after the pass (fileStacks).
		p.stacks.add(x.Tid, x.Frames, x.Out, ev, w)
		return
	}
	if ev == p.Event || len(p.EventTotals) > 1 {
		path := x.Scopes
		if path == nil {
			if x.Out != Complete {
				path = append(path, partial)
			}
			for i := len(x.Frames) - 1; i >= 0; i-- {
				path = append(path, p.scopesOf(x.Frames[i])...)
			}
		}
		p.InsertScopes(x.Tid, path, ev, w)
	}
	p.stacks.add(x.Tid, x.Frames, x.Out, ev, w)
}

// count adds a path to the profile's totals; false if its event is not
// one the profile has, and the path is not filed.
func (p *Profile) count(x *Path) bool { return p.countN(x, 1) }

// countN is count of n samples of x's thread, outcome and event, whose
// values sum to x.Value.
func (p *Profile) countN(x *Path, n uint64) bool {
	p.Samples += n
	ev, w := x.Event, x.Value
	if ev < 0 || ev >= len(p.EventTotals) {
		return false
	}
	p.EventSamples[ev] += n
	p.EventTotals[ev] += w
	if p.Meas != nil && x.Out != Complete {
		p.Meas.Partial[ev] += w
	}
	return true
}

// InsertScopes adds one sample's scope path (outermost first) with its
// value w of event ev to the merged and the thread's tree. Exported for
// profiles built from hand-made paths (the views' tests).
func (p *Profile) InsertScopes(tid uint32, path []*Elem, ev int, w uint64) {
	if ev == p.Event {
		p.Total += w
	}
	tr := p.Threads[tid]
	if tr == nil {
		tr = &Node{Label: fmt.Sprintf("thread %d", tid)}
		p.Threads[tid] = tr
	}
	shown := uint64(0)
	if ev == p.Event {
		shown = w
	}
	var vec []uint64
	if n := len(p.EventTotals); n > 1 {
		// One scratch vector for every sample: addVals copies it.
		if len(p.evScratch) != n {
			p.evScratch = make([]uint64, n)
		}
		clear(p.evScratch)
		vec = p.evScratch
		vec[ev] = w
	}
	for _, root := range []*Node{p.Root, tr} {
		n := root
		n.addVals(shown, 0, vec, nil)
		for _, e := range path {
			n = n.child(e)
			n.addVals(shown, 0, vec, nil)
		}
		n.addVals(0, shown, nil, vec)
	}
}

// fileStacks inserts the scope paths of the distinct stacks the pass
// kept, with the sums of their samples' values, in the merged tree: the
// tree sample-by-sample insertion builds. Each node of the tree of
// stacks is scoped once, below its parent's place, so children are made
// in the order of the stacks' first samples (the order of the first
// samples that reach them); the values go to the nodes the stacks end
// at, and the inclusive ones are summed up the tree at the end. The
// threads' trees are made from the merged tree's places when first
// asked for (ThreadTrees): a report that shows the merged tree only does
// not pay for a tree per thread.
func (p *Profile) fileStacks() {
	p.fileTrees(false)
	p.threadsPending = true
}

// ThreadTrees returns the calling-context tree of each thread (Threads),
// making them first if the profile was built from stacks.
func (p *Profile) ThreadTrees() map[uint32]*Node {
	if p.threadsPending {
		p.threadsPending = false
		p.fileTrees(true)
	}
	return p.Threads
}

// fileTrees files the stacks in the merged tree, or in the threads'.
func (p *Profile) fileTrees(threads bool) {
	multi := len(p.EventTotals) > 1
	var at []*Node
	if threads {
		at = p.threadPlaces()
	} else {
		pl := placer{p: p}
		pl.placeAll()
		at, p.placed = pl.at, pl.at
	}
	for n := range p.stacks.list {
		t := at[n.leaf]
		for ev := range n.events() {
			if n.samples(ev) == 0 || ev != p.Event && !multi {
				continue
			}
			w, shown := uint64(n.value(ev)), uint64(0)
			if ev == p.Event {
				shown = w
				if !threads {
					p.Total += w
				}
			}
			t.Excl += shown
			if multi {
				if t.EvExcl == nil {
					t.EvExcl = make([]uint64, len(p.EventTotals))
				}
				t.EvExcl[ev] += w
			}
		}
	}
	if !threads {
		sumUp(p.Root, multi, len(p.EventTotals))
		return
	}
	for _, t := range p.Threads {
		sumUp(t, multi, len(p.EventTotals))
	}
}

// sumUp makes each node's inclusive values its own plus its children's.
func sumUp(n *Node, multi bool, events int) {
	n.Incl = n.Excl
	if multi {
		n.EvIncl = make([]uint64, events)
		copy(n.EvIncl, n.EvExcl)
	}
	for _, c := range n.Children {
		sumUp(c, multi, events)
		n.Incl += c.Incl
		if multi {
			for i, v := range c.EvIncl {
				n.EvIncl[i] += v
			}
		}
	}
}
