package profile

// Filing the samples of a profile of distinct stacks (a frame-pointer
// perf.data file of a program built without them) is a hash look-up per
// frame in a tree of millions of nodes: one goroutine doing it was the
// slowest stage of the pass over the samples. Threads' stacks share no
// node, so each thread's go to one of several shards, each filed by a
// goroutine of its own in the order of the file; merging the shards by
// the numbers of the samples that made each node and each distinct stack
// gives the tree one goroutine filing every sample in order makes, node
// for node, whatever the number of shards.

// shardOf is the shard that files thread tid's stacks.
func shardOf(tid uint32, shards int) int { return int(tid % uint32(shards)) }

// fileAt files sample number seq's stack, as add does.
func (s *stacks) fileAt(seq uint64, tid uint32, frames []Frame, out Outcome, ev int, w uint64) int32 {
	s.seq = seq
	return s.add(tid, frames, out, ev, w)
}

// countAt files sample number seq on distinct stack number k, as count
// does.
func (s *stacks) countAt(seq uint64, k int32, ev int, w, n uint64) {
	s.seq = seq
	s.count(k, ev, w, n)
}

// mergeShards returns the tree of stacks the shards' samples make when
// filed in the order of their numbers. The shards are consumed.
func mergeShards(shards []*stacks, events int) stacks {
	m := stacks{events: events, threads: map[uint32]nodeID{}}
	endOf, endFrom := mergeEnds(&m, shards)
	// Nodes in the order they were made: by sample, and within a sample
	// (all of one shard) in the shard's order.
	newID := make([][]nodeID, len(shards))
	for k, sh := range shards {
		newID[k] = make([]nodeID, sh.nodes.n)
	}
	from := make([]uint8, 0, total(shards))
	next := make([]uint32, len(shards))
	for {
		k := earliest(len(shards), func(j int) (uint64, bool) {
			sh := shards[j]
			if next[j] == sh.nodes.n {
				return 0, false
			}
			return sh.node(nodeID(next[j] + 1)).seq, true
		})
		if k < 0 {
			break
		}
		sh := shards[k]
		old := nodeID(next[k] + 1)
		n := *sh.node(old)
		next[k]++
		if n.parent != 0 {
			n.parent = newID[k][n.parent-1]
		}
		if n.mod != 0 {
			n.mod = m.modNumber(sh.mods[n.mod-1])
		}
		if n.end != 0 {
			n.end = endOf[k][n.end-1]
		}
		n.wide = 0 // the shard's tables stay behind: remade if needed
		id := m.newNode(n)
		newID[k][old-1] = id
		from = append(from, uint8(k))
		sh.nodes.release(next[k]) // copied
	}
	// Children and siblings were made after their nodes: renumbered now.
	for id := nodeID(1); uint32(id) <= m.nodes.n; id++ {
		n, ids := m.node(id), newID[from[id-1]]
		if n.first != 0 {
			n.first = ids[n.first-1]
		}
		if n.next != 0 {
			n.next = ids[n.next-1]
		}
	}
	for k, sh := range shards {
		for tid, root := range sh.threads {
			m.threads[tid] = newID[k][root-1]
		}
	}
	for i := range int32(m.ends.n) {
		st := m.end(i + 1)
		st.leaf = newID[endFrom[i]][st.leaf-1]
	}
	return m
}

// total is the shards' number of nodes.
func total(shards []*stacks) int {
	n := 0
	for _, sh := range shards {
		n += int(sh.nodes.n)
	}
	return n
}

// mergeEnds moves the shards' distinct stacks to m in the order of their
// first samples; the new numbers of each shard's, and the shard of each
// of m's.
func mergeEnds(m *stacks, shards []*stacks) (endOf [][]int32, from []uint8) {
	endOf = make([][]int32, len(shards))
	next := make([]int32, len(shards))
	for k, sh := range shards {
		endOf[k] = make([]int32, sh.ends.n)
	}
	for {
		k := earliest(len(shards), func(j int) (uint64, bool) {
			sh := shards[j]
			if next[j] == int32(sh.ends.n) {
				return 0, false
			}
			return sh.end(next[j] + 1).seq, true
		})
		if k < 0 {
			return endOf, from
		}
		next[k]++
		endOf[k][next[k]-1] = m.newEnd(*shards[k].end(next[k]))
		from = append(from, uint8(k))
		shards[k].ends.release(uint32(next[k]))
	}
}

// earliest is the shard whose next node or stack (head) came from the
// earliest sample, -1 when every shard is done.
func earliest(shards int, head func(int) (seq uint64, ok bool)) int {
	k, least := -1, uint64(0)
	for j := range shards {
		if seq, ok := head(j); ok && (k < 0 || seq < least) {
			k, least = j, seq
		}
	}
	return k
}
