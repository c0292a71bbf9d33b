package normalize

import (
	"sort"

	"bloop/structure"
)

// MergePerfectlyNestedLoops merges a loop whose only child is a loop with
// identical bounds (file, begin and end line) into that child's parent.
func MergePerfectlyNestedLoops(p *structure.Scope) bool {
	changed := false
	structure.Walk(p, func(s *structure.Scope) {
		for s.Kind == structure.Loop && len(s.Children) == 1 && s.Children[0].Kind == structure.Loop {
			c := s.Children[0]
			if c.File != s.File || c.Line != s.Line || maxLine(c) != maxLine(s) {
				break
			}
			s.Children = c.Children
			if c.Entry < s.Entry {
				s.Entry = c.Entry
			}
			changed = true
		}
	})
	return changed
}

func maxLine(s *structure.Scope) int {
	m := 0
	structure.Walk(s, func(x *structure.Scope) {
		if x.Kind == structure.Stmt && x.Line > m {
			m = x.Line
		}
	})
	return m
}

// RemoveEmptyScopes drops aliens and loops that hold no code (no statement
// with an address range below them), and statements without ranges.
func RemoveEmptyScopes(p *structure.Scope) bool {
	changed := false
	var walk func(s *structure.Scope)
	walk = func(s *structure.Scope) {
		out := s.Children[:0]
		for _, c := range s.Children {
			switch {
			case c.Kind == structure.Stmt && len(c.Ranges) == 0,
				(c.Kind == structure.Loop || c.Kind == structure.Alien) && !hasCode(c):
				changed = true
				continue
			}
			walk(c)
			out = append(out, c)
		}
		s.Children = out
	}
	walk(p)
	return changed
}

// PartitionAlienContexts splits a lone alien context whose statements fall
// into the source regions of several procedures of its file (by part) into
// one alien per procedure, named after it.
func PartitionAlienContexts(p *structure.Scope, part Partitioner) bool {
	changed := false
	var walk func(s *structure.Scope)
	walk = func(s *structure.Scope) {
		var out []*structure.Scope
		for _, c := range s.Children {
			walk(c)
			if !c.IsLoneAlien() {
				out = append(out, c)
				continue
			}
			groups := map[string][]*structure.Scope{}
			for _, x := range c.Children {
				name := part(c.File, firstLine(x))
				groups[name] = append(groups[name], x)
			}
			if len(groups) < 2 {
				if c.Name == "" {
					for name := range groups {
						if name != "" {
							c.Name = name
							changed = true
						}
					}
				}
				out = append(out, c)
				continue
			}
			names := make([]string, 0, len(groups))
			for n := range groups {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				a := structure.NewAlien(c.File, n, firstLine(groups[n][0]))
				a.Children = groups[n]
				for _, x := range a.Children {
					if l := firstLine(x); l > 0 && (a.Line == 0 || l < a.Line) {
						a.Line = l
					}
				}
				out = append(out, a)
			}
			changed = true
		}
		s.Children = out
	}
	walk(p)
	return changed
}

// firstLine is the line of a statement, or the smallest line under a scope.
func firstLine(s *structure.Scope) int {
	if s.Kind == structure.Stmt || s.Kind == structure.Loop {
		return s.Line
	}
	m := 0
	structure.Walk(s, func(x *structure.Scope) {
		if x.Kind == structure.Stmt && x.Line > 0 && (m == 0 || x.Line < m) {
			m = x.Line
		}
	})
	return m
}
