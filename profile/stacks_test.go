package profile

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestStacksWideNodes files stacks below nodes of every width, around
// fanScan and past the edge table's growth, with addresses chosen to
// collide in the table's low bits: each distinct stack is one node and
// one end, found again by its second sample, and every node's children
// are its distinct frames.
func TestStacksWideNodes(t *testing.T) {
	mod := &Module{Name: "m"}
	for _, width := range []int{1, fanScan, fanScan + 1, 100, 5000} {
		var s stacks
		s.events = 1
		rng := rand.New(rand.NewPCG(1, uint64(width)))
		addrs := make([]uint64, width)
		for i := range addrs {
			// Multiples of 4096 share their low 12 bits.
			addrs[i] = uint64(i)<<12 | uint64(rng.IntN(2))<<40
		}
		for round := range 2 {
			for i, a := range addrs {
				s.add(7, []Frame{{Mod: mod, Addr: a}, {Mod: mod, Addr: 1}}, Complete, 0, uint64(i))
				s.add(9, []Frame{{Mod: mod, Addr: a}}, Truncated, 0, 1)
				if got, want := int(s.ends.n), 2*(i+1); round == 0 && got != want {
					t.Fatalf("width %d: %d distinct stacks after %d frames, want %d", width, got, i+1, want)
				}
			}
		}
		// Roots 2, thread 7's frame 1, thread 9's [partial], then a node
		// per address below each.
		if want := uint32(4 + 2*width); s.nodes.n != want {
			t.Errorf("width %d: %d nodes, want %d", width, s.nodes.n, want)
		}
		for st := range s.list {
			if st.count != 2 {
				t.Errorf("width %d: stack ending at node %d has %d samples, want 2", width, st.leaf, st.count)
			}
		}
		seen := map[[2]uint64]bool{}
		s.each(func(n *stackNode) {
			k := [2]uint64{uint64(n.parent), n.addr}
			if n.mod != 0 && seen[k] {
				t.Errorf("width %d: two children of node %d at %#x", width, n.parent, n.addr)
			}
			seen[k] = true
		})
	}
}

// TestMergeShards files random samples of several threads (deep and
// wide stacks, partial ones, two events, frames of several modules) in
// one tree and in 1, 2, 3 and 5 shards merged: the trees must be the
// same node for node, stack for stack, and stay so when more samples
// are filed into them after the merge.
func TestMergeShards(t *testing.T) {
	mods := []*Module{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	type sampleIn struct {
		tid    uint32
		frames []Frame
		out    Outcome
		ev     int
		w      uint64
	}
	rng := rand.New(rand.NewPCG(3, 4))
	gen := func(n int) []sampleIn {
		var in []sampleIn
		for range n {
			s := sampleIn{tid: uint32(rng.IntN(7)), out: Complete, ev: rng.IntN(2), w: uint64(rng.IntN(1000))}
			if rng.IntN(3) == 0 {
				s.out = Truncated
			}
			for range 1 + rng.IntN(6) {
				// Few addresses near the root, many at the leaves.
				s.frames = append(s.frames, Frame{Mod: mods[rng.IntN(len(mods))], Addr: uint64(rng.IntN(40 * (len(s.frames) + 1)))})
			}
			in = append(in, s)
		}
		return in
	}
	first, more := gen(20000), gen(2000)
	var want stacks
	want.events = 2
	for _, s := range first {
		want.add(s.tid, s.frames, s.out, s.ev, s.w)
	}
	for _, k := range []int{1, 2, 3, 5} {
		shards := make([]*stacks, k)
		for i := range shards {
			shards[i] = &stacks{events: 2}
		}
		for seq, s := range first {
			shards[shardOf(s.tid, k)].fileAt(uint64(seq), s.tid, s.frames, s.out, s.ev, s.w)
		}
		got := mergeShards(shards, 2)
		got.seq = uint64(len(first))
		w := want // the same nodes' chunks: compared before more are filed
		if d := sameStacks(&w, &got); d != "" {
			t.Fatalf("%d shards: %s", k, d)
		}
		// More samples after the merge: the wide nodes' table is remade.
		var again stacks
		again.events = 2
		for _, s := range first {
			again.add(s.tid, s.frames, s.out, s.ev, s.w)
		}
		for _, s := range more {
			again.add(s.tid, s.frames, s.out, s.ev, s.w)
			got.add(s.tid, s.frames, s.out, s.ev, s.w)
		}
		if d := sameStacks(&again, &got); d != "" {
			t.Fatalf("%d shards, then more samples: %s", k, d)
		}
	}
}

// sameStacks describes the first difference between two trees of
// stacks, "" if there is none.
func sameStacks(a, b *stacks) string {
	if a.nodes.n != b.nodes.n || a.ends.n != b.ends.n || len(a.mods) != len(b.mods) || len(a.threads) != len(b.threads) {
		return fmt.Sprintf("%d/%d nodes, %d/%d stacks, %d/%d modules, %d/%d threads",
			a.nodes.n, b.nodes.n, a.ends.n, b.ends.n, len(a.mods), len(b.mods), len(a.threads), len(b.threads))
	}
	for i := range a.mods {
		if a.mods[i] != b.mods[i] {
			return fmt.Sprintf("module %d: %s, %s", i+1, a.mods[i].Name, b.mods[i].Name)
		}
	}
	for tid, r := range a.threads {
		if b.threads[tid] != r {
			return fmt.Sprintf("thread %d: root %d, %d", tid, r, b.threads[tid])
		}
	}
	for id := nodeID(1); uint32(id) <= a.nodes.n; id++ {
		// Which table a wide node's children are in is no part of the
		// tree (a merge remakes them when needed).
		x, y := *a.node(id), *b.node(id)
		x.wide, y.wide = 0, 0
		if x != y {
			return fmt.Sprintf("node %d: %+v, %+v", id, x, y)
		}
	}
	for i := range int32(a.ends.n) {
		x, y := a.end(i+1), b.end(i+1)
		if x.tid != y.tid || x.leaf != y.leaf || x.count != y.count || x.seq != y.seq || !slices.Equal(x.sums, y.sums) {
			return fmt.Sprintf("stack %d: %+v, %+v", i+1, *x, *y)
		}
	}
	return ""
}

func TestFrameKey(t *testing.T) {
	type in struct {
		mod  uint32
		addr uint64
	}
	keyed := []in{
		{1, 0}, {1, 0x401000}, {1, 1<<48 - 1}, {2, 0x401000},
		{3, 0xffffffff81000000}, {3, 0xffff800000000000}, {3, 0x0000ffff81000000},
		{1<<15 - 1, 0x401000}, {1<<15 - 1, 0xffffffffffffffff},
	}
	seen := map[uint64]in{}
	for _, x := range keyed {
		k, ok := frameKey(x.mod, x.addr)
		if !ok {
			t.Errorf("frameKey(%d, %#x) not keyed", x.mod, x.addr)
			continue
		}
		if y, dup := seen[k]; dup {
			t.Errorf("frameKey(%d, %#x) = frameKey(%d, %#x) = %#x", x.mod, x.addr, y.mod, y.addr, k)
		}
		seen[k] = x
	}
	for _, x := range []in{{1, 1 << 48}, {1, 0x8000000000000000}, {1 << 15, 0x401000}, {1 << 16, 0}} {
		if _, ok := frameKey(x.mod, x.addr); ok {
			t.Errorf("frameKey(%d, %#x) keyed: it does not fit", x.mod, x.addr)
		}
	}
}

// TestStacksLastPath files stacks of interleaved threads that share
// prefixes, diverge at every depth, grow and shrink (what a thread's
// last stack, stacks.add's shortcut, must follow), and checks the tree
// against a map of every thread's distinct prefixes: one node per
// prefix, each stack's frames read back from its leaf, its samples
// counted on it.
func TestStacksLastPath(t *testing.T) {
	mods := []*Module{{Name: "a"}, {Name: "b"}}
	rng := rand.New(rand.NewPCG(3, 4))
	var s stacks
	s.events = 1
	type key struct {
		tid    uint32
		prefix string
	}
	prefixes := map[key]bool{}
	samples := map[key]int64{}
	last := map[uint32][]Frame{}
	for range 20000 {
		tid := uint32(rng.IntN(3))
		// Keep a random part of the thread's last stack (outermost
		// first), then add random frames.
		outer := slices.Clone(last[tid])
		outer = outer[:rng.IntN(len(outer)+1)]
		for range rng.IntN(4) {
			outer = append(outer, Frame{Mod: mods[rng.IntN(2)], Addr: uint64(rng.IntN(6))})
		}
		last[tid] = outer
		out := Complete
		if rng.IntN(5) == 0 {
			out = Truncated
		}
		frames := slices.Clone(outer)
		slices.Reverse(frames) // innermost first
		s.add(tid, frames, out, 0, 1)
		p := fmt.Sprint(out != Complete)
		prefixes[key{tid, p}] = true
		for _, f := range outer {
			p += fmt.Sprintf("/%s%d", f.Mod.Name, f.Addr)
			prefixes[key{tid, p}] = true
		}
		samples[key{tid, p}]++
	}
	// The roots, and [partial] with the other prefixes.
	roots := 0
	for k := range prefixes {
		if k.prefix == "false" {
			roots++
		}
	}
	if want := len(prefixes) - roots + len(s.threads); int(s.nodes.n) != want {
		t.Errorf("%d nodes, want %d (one per thread's distinct prefix)", s.nodes.n, want)
	}
	got := map[key]int64{}
	for st := range s.list {
		frames, partial := s.frames(st)
		p := fmt.Sprint(partial)
		for i := len(frames) - 1; i >= 0; i-- {
			p += fmt.Sprintf("/%s%d", frames[i].Mod.Name, frames[i].Addr)
		}
		got[key{st.tid, p}] += st.count
	}
	if len(got) != len(samples) {
		t.Errorf("%d distinct stacks, want %d", len(got), len(samples))
	}
	for k, n := range samples {
		if got[k] != n {
			t.Errorf("thread %d, stack %s: %d samples, want %d", k.tid, k.prefix, got[k], n)
		}
	}
}
