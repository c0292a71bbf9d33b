package pipeline

import (
	"cmp"
	"slices"
	"sort"

	"bloop/scopes"
	"bloop/structure"
)

// repairProc enforces what hpcprof relies on for one procedure: statements
// hold only code the procedure owns (its symbol extent and the blocks its
// CFG reached, such as .cold parts), and no byte is in two statements. A
// violation is a bloop bug, so it is counted and reported; the rule that
// mends it keeps the procedure: bytes outside are cut, and a byte claimed
// twice stays with the first statement in tree order. Statements left
// without code are removed. It returns the number of ranges changed.
func repairProc(in scopes.Input, p *structure.Scope) int {
	allowed := []structure.Range{{Lo: in.Func.Addr, Hi: in.Func.End}}
	if in.Graph != nil {
		for _, b := range in.Graph.Blocks {
			allowed = append(allowed, structure.Range{Lo: b.Start, Hi: b.End})
		}
	}
	allowed = structure.MergeRanges(allowed)
	if valid(p, allowed) {
		return 0
	}
	fixed := 0
	var used []structure.Range // sorted, disjoint
	var prune func(s *structure.Scope)
	prune = func(s *structure.Scope) {
		kids := s.Children[:0]
		for _, c := range s.Children {
			if c.Kind == structure.Stmt {
				var keep []structure.Range
				for _, r := range c.Ranges {
					parts := subtract(intersect([]structure.Range{r}, allowed), used)
					if len(parts) != 1 || parts[0] != r {
						fixed++
					}
					keep = append(keep, parts...)
				}
				if len(keep) == 0 {
					continue
				}
				c.Ranges = structure.MergeRanges(keep)
				used = structure.MergeRanges(append(used, c.Ranges...))
			} else {
				prune(c)
			}
			kids = append(kids, c)
		}
		s.Children = kids
	}
	prune(p)
	return fixed
}

// valid reports whether every statement range is non-empty, inside
// allowed, and disjoint from every other: the common case, checked without
// changing anything.
func valid(p *structure.Scope, allowed []structure.Range) bool {
	var used []structure.Range
	ok := true
	structure.Walk(p, func(s *structure.Scope) {
		if s.Kind != structure.Stmt || !ok {
			return
		}
		for _, r := range s.Ranges {
			if r.Hi <= r.Lo || !covered(allowed, r) {
				ok = false
				return
			}
			used = append(used, r)
		}
	})
	if !ok {
		return false
	}
	slices.SortFunc(used, func(a, b structure.Range) int { return cmp.Compare(a.Lo, b.Lo) })
	for i := 1; i < len(used); i++ {
		if used[i].Lo < used[i-1].Hi {
			return false
		}
	}
	return true
}

func covered(set []structure.Range, r structure.Range) bool {
	i := sort.Search(len(set), func(i int) bool { return set[i].Hi > r.Lo })
	return i < len(set) && set[i].Lo <= r.Lo && r.Hi <= set[i].Hi
}

// intersect returns the parts of rs inside the sorted, disjoint set.
func intersect(rs, set []structure.Range) []structure.Range {
	var out []structure.Range
	for _, r := range rs {
		for _, s := range set {
			lo, hi := max(r.Lo, s.Lo), min(r.Hi, s.Hi)
			if lo < hi {
				out = append(out, structure.Range{Lo: lo, Hi: hi})
			}
		}
	}
	return out
}

// subtract returns the parts of rs outside the sorted, disjoint set.
func subtract(rs, set []structure.Range) []structure.Range {
	var out []structure.Range
	for _, r := range rs {
		lo := r.Lo
		for _, s := range set {
			if s.Hi <= lo || s.Lo >= r.Hi {
				continue
			}
			if s.Lo > lo {
				out = append(out, structure.Range{Lo: lo, Hi: s.Lo})
			}
			lo = max(lo, s.Hi)
		}
		if lo < r.Hi {
			out = append(out, structure.Range{Lo: lo, Hi: r.Hi})
		}
	}
	return out
}
