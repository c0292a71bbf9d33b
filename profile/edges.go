package profile

// edgeTable finds the children of the nodes of the tree of stacks that
// have more than fanScan of them (a thread's [partial] root has one per
// distinct sampled address: a million in a frame-pointer profile of a
// program built without them). Open addressing over two flat arrays,
// each slot a tag of the edge's hash and the child's id: a look-up is
// mostly one probe in memory the garbage collector does not scan, where
// a Go map of the same edges was a fifth of the pass over the samples.
type edgeTable struct {
	tags []uint32 // the hash's high half, 0 for an empty slot
	ids  []nodeID
	n    int // edges held
}

// edgeHash is the hash of p's child at (mod, addr).
func edgeHash(p nodeID, mod uint32, addr uint64) uint64 {
	h := uint64(p)<<32 ^ uint64(mod)
	h ^= addr * 0x9e3779b97f4a7c15
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// tagOf is h's tag: never 0, which marks an empty slot.
func tagOf(h uint64) uint32 { return uint32(h>>32) | 1 }

// findEdge returns p's child at (mod, addr), whose edge hashes to h; 0
// if it has none.
func (s *stacks) findEdge(h uint64, p nodeID, mod uint32, addr uint64) nodeID {
	t := &s.many
	if len(t.ids) == 0 {
		return 0
	}
	mask := uint64(len(t.ids) - 1)
	tag := tagOf(h)
	for i := h & mask; ; i = (i + 1) & mask {
		switch t.tags[i] {
		case 0:
			return 0
		case tag:
			id := t.ids[i]
			if n := s.node(id); n.parent == p && n.mod == mod && n.addr == addr {
				return id
			}
		}
	}
}

// putEdge files child c, whose edge hashes to h; it must not be there.
func (s *stacks) putEdge(h uint64, c nodeID) {
	t := &s.many
	if 2*(t.n+1) > len(t.ids) {
		old := t.ids
		size := max(1024, 2*len(old))
		t.tags, t.ids, t.n = make([]uint32, size), make([]nodeID, size), 0
		for _, id := range old {
			if id != 0 {
				n := s.node(id)
				t.insert(edgeHash(n.parent, n.mod, n.addr), id)
			}
		}
	}
	t.insert(h, c)
}

func (t *edgeTable) insert(h uint64, c nodeID) {
	mask := uint64(len(t.ids) - 1)
	i := h & mask
	for t.tags[i] != 0 {
		i = (i + 1) & mask
	}
	t.tags[i], t.ids[i] = tagOf(h), c
	t.n++
}
