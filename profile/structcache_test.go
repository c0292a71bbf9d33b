package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/cache"
)

// TestMeasStructsCached: a measurement directory's structs/ read through
// the report's cache (parsed and checked once, then from the cache) give
// the profile and the warnings of reading them afresh, for a structure
// file of the module's build and for one of another build under its
// path (refused, with the same line).
func TestMeasStructsCached(t *testing.T) {
	for _, other := range []bool{false, true} {
		name := map[bool]string{false: "own build", true: "other build"}[other]
		t.Run(name, func(t *testing.T) {
			dir := copyMeas(t, true)
			if other {
				o := rewriteLM(t, "../testdata/golden/loops-gcc12-O3.hpcstruct", "/opt/demo/prog")
				b, err := os.ReadFile(o)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "structs", "prog.hpcstruct"), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c, err := cache.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			var dumps [3]string
			for i, cc := range []*cache.Cache{nil, c, c} {
				p, err := Build(dir, Options{ModuleDirs: []string{hpcrunMeas}, Cache: cc, Analyze: func(string) bool { return false }})
				if err != nil {
					t.Fatal(err)
				}
				dumps[i] = dumpProfile(t, p) + strings.Join(p.Warnings, "\n")
			}
			if dumps[0] != dumps[1] || dumps[0] != dumps[2] {
				t.Errorf("without a cache, filling it and from it differ:\n%s\n----\n%s\n----\n%s", dumps[0], dumps[1], dumps[2])
			}
			if refused := strings.Contains(dumps[0], "is of another build than /opt/demo/prog"); refused != other {
				t.Errorf("refused: %v, want %v:\n%s", refused, other, dumps[0])
			}
		})
	}
}
