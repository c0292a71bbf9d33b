package heuristic

import (
	"path/filepath"

	"bloop/scopes"
)

// FuzzyLoopLines gives the loops of a tree built from DWARF inline records
// the thesis's fuzzy begin lines (bbranch-max-fuzzy): a loop's header line,
// taken from its exit conditions, moves up to the smallest line of its own
// statements within loopBeginTol lines above it.
func FuzzyLoopLines(p *scopes.Scope) {
	scopes.Walk(p, func(s *scopes.Scope) {
		if s.Kind != scopes.Loop || s.Line == 0 {
			return
		}
		best := s.Line
		for _, c := range s.Children {
			if c.Kind != scopes.Stmt || c.Line == 0 || c.Line >= best || c.Line < s.Line-loopBeginTol {
				continue
			}
			if c.File != "" && s.File != "" && filepath.Base(c.File) != filepath.Base(s.File) {
				continue
			}
			best = c.Line
		}
		s.Line = best
	})
}
