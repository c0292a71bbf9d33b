package profile

// edgeTable finds the children of a node of the tree of stacks that has
// more than fanScan of them (a thread's [partial] root has one per
// distinct address sampled in it: thousands, a million in all in a
// frame-pointer profile of a program built without them). Open
// addressing over a flat array the garbage collector does not scan,
// each slot the child's frame and id: a look-up reads no node, and a
// thread's table stays in cache while its samples come, where one Go
// map of every such edge was a fifth of the pass over the samples.
type edgeTable struct {
	slots []edgeSlot
	n     int // edges held
}

type edgeSlot struct {
	addr uint64
	mod  uint32
	id   nodeID // 0: empty
}

// frameHash is the hash of a frame's module number and address.
func frameHash(mod uint32, addr uint64) uint64 {
	h := addr*0x9e3779b97f4a7c15 ^ uint64(mod)
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// find returns the child at (mod, addr), 0 if there is none.
func (t *edgeTable) find(mod uint32, addr uint64) nodeID {
	mask := uint64(len(t.slots) - 1)
	for i := frameHash(mod, addr) & mask; ; i = (i + 1) & mask {
		sl := &t.slots[i]
		if sl.id == 0 || sl.addr == addr && sl.mod == mod {
			return sl.id
		}
	}
}

// put files child c at (mod, addr); it must not be there.
func (t *edgeTable) put(mod uint32, addr uint64, c nodeID) {
	// Filled to three quarters, not half: the probes stay within a
	// cache line or two, and the fewer, smaller tables cost less than
	// they do (0.87x the CPU of a frame-pointer report, 43 MiB less).
	if 4*(t.n+1) > 3*len(t.slots) {
		old := t.slots
		t.slots, t.n = makeTouched[edgeSlot](max(32, 2*len(old))), 0
		for _, sl := range old {
			if sl.id != 0 {
				t.insert(sl)
			}
		}
	}
	t.insert(edgeSlot{addr, mod, c})
}

func (t *edgeTable) insert(sl edgeSlot) {
	mask := uint64(len(t.slots) - 1)
	i := frameHash(sl.mod, sl.addr) & mask
	for t.slots[i].id != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = sl
	t.n++
}

// wideTable makes node p's table of children, filing those it has.
func (s *stacks) wideTable(p nodeID) {
	s.wide = append(s.wide, edgeTable{})
	t := &s.wide[len(s.wide)-1]
	for d := s.node(p).first; d != 0; d = s.node(d).next {
		dn := s.node(d)
		t.put(dn.mod, dn.addr, d)
	}
	s.node(p).wide = uint32(len(s.wide))
}
