package havlak

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// wmzc computes the innermost loop header of every node by Wei, Mao, Zou
// and Chen's single-DFS algorithm ("A New Algorithm for Identifying Loops
// in Decompilation", SAS 2007), the loop finder of Dyninst's ParseAPI,
// written from the paper for comparison. It returns hdr (innermost
// enclosing header, -1 for none), isHeader, and, per header, whether an
// entry other than the header was found (irreducible).
func wmzc(n, entry int, succs [][]int) (hdr []int, isHeader, irr []bool) {
	hdr = make([]int, n)
	pos := make([]int, n) // DFS path position, 0 when off the path
	visited := make([]bool, n)
	isHeader = make([]bool, n)
	irr = make([]bool, n)
	for i := range hdr {
		hdr[i] = -1
	}
	tag := func(b, h int) {
		if b == h || h < 0 {
			return
		}
		c1, c2 := b, h
		for hdr[c1] >= 0 {
			ih := hdr[c1]
			if ih == c2 {
				return
			}
			if pos[ih] < pos[c2] {
				hdr[c1] = c2
				c1, c2 = c2, ih
			} else {
				c1 = ih
			}
		}
		hdr[c1] = c2
	}
	var dfs func(b0, p int) int
	dfs = func(b0, p int) int {
		visited[b0] = true
		pos[b0] = p
		for _, b := range succs[b0] {
			if b < 0 || b >= n {
				continue
			}
			switch {
			case !visited[b]:
				tag(b0, dfs(b, p+1))
			case pos[b] > 0:
				isHeader[b] = true
				tag(b0, b)
			case hdr[b] < 0:
			default:
				h := hdr[b]
				if pos[h] > 0 {
					tag(b0, h)
					break
				}
				irr[h] = true
				for hdr[h] >= 0 {
					h = hdr[h]
					if pos[h] > 0 {
						tag(b0, h)
						break
					}
					irr[h] = true
				}
			}
		}
		pos[b0] = 0
		return hdr[b0]
	}
	dfs(entry, 1)
	return hdr, isHeader, irr
}

// TestSameAsWMZC: for the same depth-first order, the forest is the one
// Dyninst's loop finder computes: the same headers, the same innermost
// loop for every node, the same nesting.
func TestSameAsWMZC(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 5000 {
		n := 1 + r.IntN(30)
		succs := randomGraph(r, n, iter%3)
		entry := r.IntN(n)
		f := Find(n, entry, succs)
		hdr, isHeader, irr := wmzc(n, entry, succs)
		var got, want []string
		for v := range n {
			if l := f.Innermost[v]; l != nil {
				got = append(got, fmt.Sprintf("%d in %d", v, l.Header))
				if l.Header == v {
					p := -1
					if l.Parent != nil {
						p = l.Parent.Header
					}
					got = append(got, fmt.Sprintf("loop %d parent %d irr %v", v, p, l.Irreducible))
				}
			}
			switch {
			case isHeader[v]:
				want = append(want, fmt.Sprintf("%d in %d", v, v))
				want = append(want, fmt.Sprintf("loop %d parent %d irr %v", v, hdr[v], irr[v]))
			case hdr[v] >= 0:
				want = append(want, fmt.Sprintf("%d in %d", v, hdr[v]))
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("iter %d: entry %d succs %v\nhavlak %v\nwmzc   %v", iter, entry, succs, got, want)
		}
	}
}
