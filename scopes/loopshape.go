package scopes

import (
	"bloop/cfg"
	"bloop/havlak"
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
