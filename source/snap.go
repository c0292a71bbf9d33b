package source

import (
	"sort"

	"bloop/scopes"
)

// Tol is how far above its branch line a loop statement may be: the
// thesis's loop begin tolerance.
const Tol = 5

// SnapLoops moves each loop's header line up to the nearest loop
// statement written at most Tol lines above it in the same file, inner
// loops first, each source loop used once per nest (a nest of two loops
// whose branches share a line gets the two DO lines above it).
func SnapLoops(p *scopes.Scope, f *Finder) {
	var walk func(s *scopes.Scope) map[int]bool
	walk = func(s *scopes.Scope) map[int]bool {
		used := map[int]bool{}
		for _, c := range s.Children {
			for l := range walk(c) {
				used[l] = true
			}
		}
		if s.Kind != scopes.Loop || s.Line == 0 || s.File == "" {
			return used
		}
		// A do-while's branch is on its while line: the loop is its do.
		if d, ok := f.DoLine(s.File, s.Line); ok && !used[d] {
			s.Line = d
			used[d] = true
			return used
		}
		lines := f.LoopLines(s.File)
		i := sort.SearchInts(lines, s.Line+1) - 1
		for ; i >= 0 && lines[i] >= s.Line-Tol; i-- {
			if !used[lines[i]] {
				s.Line = lines[i]
				break
			}
		}
		used[s.Line] = true
		return used
	}
	walk(p)
}
