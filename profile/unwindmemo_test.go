package profile

import (
	"path/filepath"
	"testing"

	"bloop/cache"
	"bloop/internal/rectest"
)

// TestWarmRecipes: a report whose modules' recipes and scopes are cached
// computes no recipes, reads no module's DWARF (the lines of frames
// outside the scopes are kept with them), and gives the cold report's
// bytes. The files share one cache and some modules (libc): what a later
// file adds to a module's recipes is kept with what an earlier one
// stored.
func TestWarmRecipes(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/prof/bin")
	files, _ := filepath.Glob("../perfevent/testdata/*dwarf*.data")
	files = append(files, rectest.Record(t, filepath.Join(bin, "unwind-gcc12-O2"), "100", "2", "200"),
		rectest.Record(t, filepath.Join(bin, "throw-gcc12-O2"), "20000"))
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	warmOnly := map[string]func() (string, int, []string){}
	want := map[string]string{}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			build := func(cc *cache.Cache) (string, int, []string) {
				p, err := Build(f, Options{ModuleDirs: []string{bin}, Cache: cc, Jobs: 2})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				var dwarf []string
				for _, m := range p.Modules {
					if m.Unw != nil {
						n += m.Unw.RecipesComputed()
					}
					if m.Img != nil && m.Img.ReadLazily() {
						dwarf = append(dwarf, m.Name)
					}
				}
				return dumpProfile(t, p), n, dwarf
			}
			cold, _, _ := build(nil)
			filling, _, _ := build(c)
			warm, computed, dwarf := build(c)
			if cold != filling || cold != warm {
				t.Errorf("cold, filling the cache and warm differ:\n%s\n----\n%s\n----\n%s", cold, filling, warm)
			}
			if computed != 0 {
				t.Errorf("warm: %d procedures' recipes computed, want all from the cache", computed)
			}
			if len(dwarf) > 0 {
				t.Errorf("warm: the DWARF of %v read", dwarf)
			}
			warmOnly[f] = func() (string, int, []string) { return build(c) }
			want[f] = cold
		})
	}
	// Each again, after the later files added to the modules they share:
	// still warm, nothing of the earlier files' entries lost.
	for _, f := range files {
		if warmOnly[f] == nil {
			continue
		}
		got, computed, dwarf := warmOnly[f]()
		if got != want[f] || computed != 0 || len(dwarf) > 0 {
			t.Errorf("%s warm after the others: %d recipes computed, the DWARF of %v read, same bytes %v", filepath.Base(f), computed, dwarf, got == want[f])
		}
	}
}
