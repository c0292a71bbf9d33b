package scopes

import (
	"bloop/cfg"
	"bloop/havlak"
	"bloop/isa"
)

// LoopShape is what both placement engines read off a loop in the CFG.
type LoopShape struct {
	In      BlockSet // the loop's blocks, nested loops included
	Exits   []int    // blocks with edges both inside and outside the loop (exit conditions)
	Entries []int    // blocks entered from outside the loop (or the procedure entry)
	Entry   uint64   // the lowest entry block's address: the loop's `v`
}

// BlockSet is a set of a graph's block indexes: a bit each, as a map of
// them made ShapeOf the hottest part of placing python3.11's eval loop.
type BlockSet []uint64

// Has reports whether block v is in s.
func (s BlockSet) Has(v int) bool { return v>>6 < len(s) && s[v>>6]&(1<<(v&63)) != 0 }

func (s BlockSet) add(v int) { s[v>>6] |= 1 << (v & 63) }

// ShapeOf computes l's shape in g.
func ShapeOf(g *cfg.Graph, l *havlak.Loop) LoopShape {
	all := l.AllNodes()
	s := LoopShape{In: make(BlockSet, (len(g.Blocks)+63)/64), Entry: ^uint64(0)}
	for _, v := range all {
		s.In.add(v)
	}
	for _, v := range all {
		blk := g.Blocks[v]
		inside, outside := false, false
		for _, x := range blk.Succs {
			if s.In.Has(x) {
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
			if !s.In.Has(p) {
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
			if sh.In.Has(x) {
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
