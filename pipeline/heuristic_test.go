package pipeline

import (
	"path/filepath"
	"testing"

	"bloop/loader"
	"bloop/normalize"
	"bloop/structure"
)

// TestHeuristicFlatContexts checks the thesis engine's shape on every
// corpus binary, with and without normalization: alien contexts are
// flattened per enclosing loop or procedure, so a scope at loop depth m
// has at most m+2 procedure contexts above it (thesis 4.1.2), and an alien
// context never sits directly in another.
func TestHeuristicFlatContexts(t *testing.T) {
	for _, b := range corpusBinaries(t) {
		img, err := loader.Open(b, loader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, lvl := range []normalize.Level{normalize.None, normalize.All} {
			lvl := lvl
			m, errs := Analyze(img, Options{Workers: 2, Engine: Heuristic, Normalize: &lvl})
			if len(errs) > 0 {
				t.Errorf("%s: %v", b, errs[0])
			}
			var walk func(s *structure.Scope, depth, contexts int, parent *structure.Scope)
			walk = func(s *structure.Scope, depth, contexts int, parent *structure.Scope) {
				switch {
				case s.Kind == structure.Loop:
					depth++
				case s.IsContext():
					contexts++
					if s.Kind == structure.Alien && parent != nil && parent.Kind == structure.Alien {
						t.Errorf("%s: alien %s:%d directly inside alien %s:%d", filepath.Base(b), s.File, s.Line, parent.File, parent.Line)
					}
				}
				if contexts > depth+2 {
					t.Errorf("%s: %d procedure contexts at loop depth %d", filepath.Base(b), contexts, depth)
				}
				for _, c := range s.Children {
					walk(c, depth, contexts, s)
				}
			}
			for _, f := range m.Files {
				for _, p := range f.Procs {
					walk(p, 0, 0, nil)
				}
			}
		}
	}
}
