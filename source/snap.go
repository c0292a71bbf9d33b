package source

import (
	"slices"
	"sort"

	"bloop/structure"
)

// Tol is how far above its branch line a loop statement may be: the
// thesis's loop begin tolerance.
const Tol = structure.LoopLineTol

// SnapLoops moves each loop's header line up to the nearest loop
// statement written at most Tol lines above it in the same file, inner
// loops first, each source loop used once per nest (a nest of two loops
// whose branches share a line gets the two DO lines above it).
func SnapLoops(p *structure.Scope, f *Finder) {
	// walk returns the source loop lines used in s: few, so a slice (a map
	// for every scope was most of this pass's cost).
	var walk func(s *structure.Scope) []int
	walk = func(s *structure.Scope) []int {
		var used []int
		for _, c := range s.Children {
			if c.Kind != structure.Stmt {
				used = append(used, walk(c)...)
			}
		}
		if s.Kind != structure.Loop || s.Line == 0 || s.File == "" {
			return used
		}
		// A do-while's branch is on its while line: the loop is its do.
		if d, ok := f.DoLine(s.File, s.Line); ok && !slices.Contains(used, d) {
			s.Line = d
			return append(used, d)
		}
		lines := f.LoopLines(s.File)
		i := sort.SearchInts(lines, s.Line+1) - 1
		for ; i >= 0 && lines[i] >= s.Line-Tol; i-- {
			if !slices.Contains(used, lines[i]) {
				s.Line = lines[i]
				break
			}
		}
		return append(used, s.Line)
	}
	walk(p)
}
