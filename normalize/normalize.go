// Package normalize holds the thesis's normalization passes over a finished
// scope tree (Tallent 2007, section 3.6): coalesce-duplicate-statements,
// merge-perfectly-nested-loops, partition-alien-contexts and
// remove-empty-scopes. Each pass is separate; Run applies a set of them in
// the thesis's order until nothing changes. Address ranges move with merged
// scopes, so every code byte stays in exactly one statement.
package normalize

import (
	"fmt"

	"bloop/structure"
)

// Level selects passes.
type Level int

// Normalization levels for -N.
const (
	None Level = iota // no pass (what hpcstruct does)
	Safe              // passes that never move code across loop levels: merge-perfectly-nested-loops, remove-empty-scopes
	All               // every pass, in the thesis's order
)

// ParseLevel reads the -N flag.
func ParseLevel(s string) (Level, error) {
	switch s {
	case "none":
		return None, nil
	case "safe":
		return Safe, nil
	case "all":
		return All, nil
	}
	return None, fmt.Errorf("unknown normalization %q (want all, safe or none)", s)
}

// Partitioner names the procedure whose source region holds (file, line),
// or "" when no descriptor says; partition-alien-contexts splits alien
// contexts by it.
type Partitioner func(file string, line int) string

// maxRounds bounds the fixed-point iteration; each round must shrink the tree.
const maxRounds = 64

// Run normalizes procedure p in place.
func Run(p *structure.Scope, lvl Level, part Partitioner) {
	if lvl == None {
		return
	}
	for round := 0; round < maxRounds; round++ {
		changed := false
		if lvl == All {
			changed = CoalesceDuplicateStatements(p) || changed
		}
		changed = MergePerfectlyNestedLoops(p) || changed
		if lvl == All && part != nil {
			changed = PartitionAlienContexts(p, part) || changed
		}
		changed = RemoveEmptyScopes(p) || changed
		if !changed {
			return
		}
	}
}

// lineKey identifies a statement's source line.
type lineKey struct {
	file string
	line int
}

// stmtFile is the file of a statement for coalescing: its own, or the file
// context it inherits.
func stmtFile(s *structure.Scope, ctxFile string) string {
	if s.File != "" {
		return s.File
	}
	return ctxFile
}

// mergeStmt moves src's ranges into dst.
func mergeStmt(dst, src *structure.Scope) {
	dst.Ranges = structure.MergeRanges(append(dst.Ranges, src.Ranges...))
	src.Ranges = nil
}

func removeChild(parent, c *structure.Scope) {
	out := parent.Children[:0]
	for _, x := range parent.Children {
		if x != c {
			out = append(out, x)
		}
	}
	parent.Children = out
}

// hasCode reports whether any statement under s has an address range.
func hasCode(s *structure.Scope) bool {
	found := false
	structure.Walk(s, func(x *structure.Scope) {
		if x.Kind == structure.Stmt && len(x.Ranges) > 0 {
			found = true
		}
	})
	return found
}
