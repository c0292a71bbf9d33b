package scopes

import (
	"bloop/cfg"
	"bloop/havlak"
	"bloop/isa"
)

// LoopShape is what both placement engines read off a loop in the CFG.
type LoopShape struct {
	In      map[int]bool // the loop's blocks, nested loops included
	Exits   []int        // blocks with edges both inside and outside the loop (exit conditions)
	Entries []int        // blocks entered from outside the loop (or the procedure entry)
	Entry   uint64       // the lowest entry block's address: the loop's `v`
}

// ShapeOf computes l's shape in g.
func ShapeOf(g *cfg.Graph, l *havlak.Loop) LoopShape {
	all := l.AllNodes()
	s := LoopShape{In: make(map[int]bool, len(all)), Entry: ^uint64(0)}
	for _, v := range all {
		s.In[v] = true
	}
	for _, v := range all {
		blk := g.Blocks[v]
		inside, outside := false, false
		for _, x := range blk.Succs {
			if s.In[x] {
				inside = true
			} else {
				outside = true
			}
		}
		if inside && outside {
			s.Exits = append(s.Exits, v)
		}
		isEntry := v == g.Entry
		for _, p := range blk.Preds {
			if !s.In[p] {
				isEntry = true
			}
		}
		if isEntry {
			s.Entries = append(s.Entries, v)
			s.Entry = min(s.Entry, blk.Start)
		}
	}
	if s.Entry == ^uint64(0) {
		s.Entry = g.Blocks[l.Header].Start
	}
	return s
}

// HpcstructExits lists l's exit conditions as hpcstruct's findLoopHeader
// counts them: blocks with an edge into the loop and one out of it, where
// Dyninst's out edges include those that leave the procedure (its
// intraprocedural graph, and so ShapeOf, has none): the return edge of a
// conditional return (ppc64's bgelr) and the taken edge of a conditional
// branch to another procedure (a conditional tail call). Call and call
// fall-through edges count for neither side.
func HpcstructExits(g *cfg.Graph, l *havlak.Loop, sh LoopShape) []int {
	var out []int
	for _, v := range l.AllNodes() {
		blk := g.Blocks[v]
		inside, outside := false, false
		for _, x := range blk.Succs {
			if sh.In[x] {
				inside = true
			} else {
				outside = true
			}
		}
		switch last := blk.Last(); last.Kind {
		case isa.CondReturn:
			outside = true
		case isa.CondJump:
			if _, ok := g.BlockAt(last.Target); !ok {
				outside = true
			}
		}
		if inside && outside {
			out = append(out, v)
		}
	}
	return out
}
