package profile

import (
	"fmt"
	"unsafe"
)

// placer places the nodes of the tree of stacks in the merged tree.
type placer struct {
	p *Profile
	// at is each stack node's place, by id.
	at []*Node
	// memo is the place of each frame below each scope node: the stacks
	// of many threads (processes of one program, whose [partial] roots
	// are one node in the merged tree) and the many addresses of one
	// scope reach few distinct places below the same nodes (320 thousand
	// of 1.7 million in a frame-pointer profile of g++), and scoping an
	// address is a search of its module's scopes.
	memo placeMemo
	// scopes are the scopes of frames outside their module's index
	// (Profile.madeScopes, which keeps them): keyed as memo.
	scopes map[uint64][]*Elem
	// paths is the place of each path of scopes below each scope node:
	// frames of one scope share its path (the g++ profile's 320 thousand
	// misses of memo are 140 thousand paths below their nodes).
	paths placeMemo
	// labels are the labels of scopes other than procedures (label).
	labels map[*Elem]string
}

// placeAll places every node of the tree of stacks, in the order of
// their ids: a parent before its children, and (the ids numbering the
// nodes in the order of the samples that made them) each in the order
// of the first stack that reaches it, the order a walk of the stacks
// from each one's root would place them in, so the scope trees' children
// are made in the same order as sample-by-sample insertion makes them.
func (pl *placer) placeAll() {
	p := pl.p
	s := &p.stacks
	pl.at = makeTouched[*Node](int(s.nodes.n) + 1)
	for _, r := range s.threads {
		pl.at[r] = p.Root
	}
	id := nodeID(0)
	s.nodes.all(func(n *stackNode) bool {
		if id++; n.parent != 0 {
			pl.at[id] = pl.place(n)
		}
		return true
	})
}

// place returns the place of stack node s, not a root, making the scope
// nodes its path needs; its parent's is known.
func (pl *placer) place(s *stackNode) *Node {
	parent := pl.at[s.parent]
	k, keyed := frameKey(s.mod, s.addr)
	if keyed {
		if n := pl.memo.find(parent, k); n != nil {
			return n
		}
	}
	sc := pl.scopesOf(s, k, keyed)
	pk, pkeyed := pathKey(sc)
	var n *Node
	if pkeyed {
		n = pl.paths.find(parent, pk)
	}
	if n == nil {
		n = parent
		for _, e := range sc {
			n = n.childLabeled(e, pl.label)
		}
		if pkeyed {
			pl.paths.put(parent, pk, n)
		}
	}
	if keyed {
		pl.memo.put(parent, k, n)
	}
	return n
}

// label is e's label, each formatted once: a scope is placed below many
// nodes (formatting each new node's label was a third of placing the
// nodes of a frame-pointer profile); a procedure's is its name.
func (pl *placer) label(e *Elem) string {
	if e.Kind == ElemProc {
		return e.Name
	}
	label, ok := pl.labels[e]
	if !ok {
		if pl.labels == nil {
			pl.labels = map[*Elem]string{}
		}
		label = e.Label()
		pl.labels[e] = label
	}
	return label
}

// threadPlaces places every node of the tree of stacks in its thread's
// tree: its place there has the scope path of its place in the merged
// tree (placed), so it is found from its parent's place by the steps
// between their merged places, not by scoping its frame again (which
// cost a memo and a scope search per node, each thread's places its
// own: two thirds of a --threads report of g++). Nodes go in the order
// of their ids, so each thread's children are made in the order its
// samples reached them, as the merged tree's are.
func (p *Profile) threadPlaces() []*Node {
	s := &p.stacks
	at := makeTouched[*Node](int(s.nodes.n) + 1)
	for tid, r := range s.threads {
		t := p.Threads[tid]
		if t == nil {
			t = &Node{Label: fmt.Sprintf("thread %d", tid)}
			p.Threads[tid] = t
		}
		at[r] = t
	}
	var steps []*Node
	id := nodeID(0)
	s.nodes.all(func(n *stackNode) bool {
		if id++; n.parent == 0 {
			return true
		}
		steps = steps[:0]
		for m, above := p.placed[id], p.placed[n.parent]; m != above; m = m.Parent {
			steps = append(steps, m)
		}
		t := at[n.parent]
		for i := len(steps) - 1; i >= 0; i-- {
			t = t.childAs(steps[i])
		}
		at[id] = t
		return true
	})
	p.placed = nil
	return at
}

// scopesOf is the scopes of stack node s's frame, of key k if keyed.
func (pl *placer) scopesOf(s *stackNode, k uint64, keyed bool) []*Elem {
	if s.mod == 0 {
		return partialPath
	}
	// A frame its module's index holds is a look-up of the index, cheaper
	// than of the memo below (a map of every frame scoped).
	f := pl.p.stacks.frame(s)
	if sc := pl.p.indexedScopes(f); sc != nil {
		return sc
	}
	if keyed {
		if sc, ok := pl.scopes[k]; ok {
			return sc
		}
	}
	sc := pl.p.madeScopes(f)
	if keyed {
		if pl.scopes == nil {
			pl.scopes = map[uint64][]*Elem{}
		}
		pl.scopes[k] = sc
	}
	return sc
}

var partialPath = []*Elem{partial}

// pathKey is a key of path's identity, its array and length: a frame's
// path is kept for the profile's life (by its module's scope index, or
// Profile.elemPath), so no other path can have them. ok is false when
// they do not fit.
func pathKey(path []*Elem) (uint64, bool) {
	a := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(path))))
	return a<<8 | uint64(len(path)), a < 1<<56 && len(path) < 1<<8
}

// frameKey packs a frame's module number and address in a word; ok is
// false when they do not fit. Addresses are of the lower half of a 48-bit
// space or, a kernel's, of its upper half (canonical: the bits above 47
// all set), which a bit of the key tells apart.
func frameKey(mod uint32, addr uint64) (uint64, bool) {
	const low = 1<<48 - 1
	var upper uint64
	switch {
	case addr <= low:
	case addr>>47 == 1<<17-1:
		upper = 1
	default:
		return 0, false
	}
	return uint64(mod)<<49 | upper<<48 | addr&low, mod < 1<<15
}

// placeMemo maps a scope node and a frame's key to the place below it:
// open addressing over one array, where a Go map per node cost two
// look-ups, a third of scoping the g++ profile.
type placeMemo struct {
	slots []memoSlot
	n     int
}

type memoSlot struct {
	parent *Node // nil: empty
	key    uint64
	place  *Node
}

// memoHash hashes a node by its address: Go's collector does not move
// what is on the heap, and the memo keeps the nodes it holds alive.
func memoHash(parent *Node, key uint64) uint64 {
	return frameHash(uint32(uintptr(unsafe.Pointer(parent))>>3), key^uint64(uintptr(unsafe.Pointer(parent))>>35))
}

// find returns the place of key below parent, nil if there is none yet.
func (m *placeMemo) find(parent *Node, key uint64) *Node {
	if len(m.slots) == 0 {
		return nil
	}
	mask := uint64(len(m.slots) - 1)
	for i := memoHash(parent, key) & mask; ; i = (i + 1) & mask {
		sl := &m.slots[i]
		if sl.parent == nil || sl.parent == parent && sl.key == key {
			return sl.place
		}
	}
}

// put files the place of key below parent; it must not be there.
func (m *placeMemo) put(parent *Node, key uint64, place *Node) {
	if 4*(m.n+1) > 3*len(m.slots) {
		old := m.slots
		m.slots, m.n = makeTouched[memoSlot](max(1024, 2*len(old))), 0
		for _, sl := range old {
			if sl.parent != nil {
				m.insert(sl)
			}
		}
	}
	m.insert(memoSlot{parent, key, place})
}

func (m *placeMemo) insert(sl memoSlot) {
	mask := uint64(len(m.slots) - 1)
	i := memoHash(sl.parent, sl.key) & mask
	for m.slots[i].parent != nil {
		i = (i + 1) & mask
	}
	m.slots[i] = sl
	m.n++
}
