package profile

import (
	"math/rand/v2"
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
				if got, want := int(s.nends), 2*(i+1); round == 0 && got != want {
					t.Fatalf("width %d: %d distinct stacks after %d frames, want %d", width, got, i+1, want)
				}
			}
		}
		// Roots 2, thread 7's frame 1, thread 9's [partial], then a node
		// per address below each.
		if want := uint32(4 + 2*width); s.nodes != want {
			t.Errorf("width %d: %d nodes, want %d", width, s.nodes, want)
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
