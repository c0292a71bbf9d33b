package scopes

import "bloop/havlak"

// fileRanks numbers the file names of a procedure in the order hpcstruct's
// string table first sees them. hpcstruct keeps one table per procedure
// (per work item, so the order does not depend on its threads) and keys an
// inline node's calls by the table index of their call file; the callee's
// file is that of its first call in index order. Names enter as the code is
// walked: loops bottom-up (nested loops first, siblings by entry), each
// loop's own blocks by address, then the blocks outside loops, then the
// gaps; for each instruction the call files of its inline chain, outermost
// first, then its line's file.
func (b *builder) fileRanks() map[string]int {
	rank := map[string]int{"": 0}
	see := func(f string) {
		if _, ok := rank[f]; !ok {
			rank[f] = len(rank)
		}
	}
	at := func(a uint64) {
		for _, k := range b.path(a) {
			see(k.siteFile())
		}
		see(b.line(a).file)
	}
	g, f := b.in.Graph, b.in.Forest
	if g != nil && !b.in.Claimed {
		seen := make([]bool, len(g.Blocks))
		block := func(v int) {
			if seen[v] {
				return
			}
			seen[v] = true
			for _, in := range g.Blocks[v].Insts {
				at(in.Addr)
			}
		}
		var loop func(l *havlak.Loop)
		loop = func(l *havlak.Loop) {
			for _, c := range l.Children {
				loop(c)
			}
			for _, v := range l.Nodes {
				block(v)
			}
		}
		for _, l := range f.Top {
			loop(l)
		}
		for v := range g.Blocks {
			block(v)
		}
	}
	for _, r := range Gaps(b.in) {
		if a := b.gapAt(r); a == r.Lo {
			at(a)
		}
	}
	b.gapLo, b.gapEnd, b.gapKey = 0, 0, stmtKey{}
	return rank
}

// siteFile is the call file as hpcstruct names it: an unread call site is
// the file "<unknown>".
func (k *inlKey) siteFile() string {
	if k.unknown {
		return unknownFile
	}
	return k.callFile
}
