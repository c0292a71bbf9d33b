package pipeline

import (
	"fmt"
	"sort"

	"bloop/loader"
	"bloop/scopes"
)

// checkProc verifies the invariants hpcprof relies on for one procedure:
// statements hold only code the procedure owns (its symbol extent and the
// blocks its CFG reached, such as .cold parts), and no byte is in two
// statements. A violation is a bloop bug; the procedure is then skipped
// rather than written wrong.
func checkProc(in scopes.Input, p *scopes.Scope) error {
	allowed := []scopes.Range{{Lo: in.Func.Addr, Hi: in.Func.End}}
	if in.Graph != nil {
		for _, b := range in.Graph.Blocks {
			allowed = append(allowed, scopes.Range{Lo: b.Start, Hi: b.End})
		}
	}
	allowed = loader.MergeRanges(allowed)
	var used []scopes.Range
	var err error
	scopes.Walk(p, func(s *scopes.Scope) {
		if s.Kind != scopes.Stmt || err != nil {
			return
		}
		for _, r := range s.Ranges {
			if r.Hi <= r.Lo {
				err = fmt.Errorf("empty range [%#x,%#x) at line %d", r.Lo, r.Hi, s.Line)
				return
			}
			if !covered(allowed, r) {
				err = fmt.Errorf("statement [%#x,%#x) at line %d lies outside the procedure", r.Lo, r.Hi, s.Line)
				return
			}
			used = append(used, r)
		}
	})
	if err != nil {
		return err
	}
	sort.Slice(used, func(i, j int) bool { return used[i].Lo < used[j].Lo })
	for i := 1; i < len(used); i++ {
		if used[i].Lo < used[i-1].Hi {
			return fmt.Errorf("address %#x is in two statements", used[i].Lo)
		}
	}
	return nil
}

func covered(set []scopes.Range, r scopes.Range) bool {
	i := sort.Search(len(set), func(i int) bool { return set[i].Hi > r.Lo })
	return i < len(set) && set[i].Lo <= r.Lo && r.Hi <= set[i].Hi
}
