package unwind

import (
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"bloop/internal/testenv"
	"bloop/loader"
)

// mapMemo is a Memo in memory that counts what it answered.
type mapMemo struct {
	m          map[string][]byte
	hits, puts int
}

func (mm *mapMemo) Get(kind string) []byte {
	b := mm.m[kind]
	if b != nil {
		mm.hits++
	}
	return b
}

func (mm *mapMemo) Put(kind string, b []byte) { mm.m[kind] = b; mm.puts++ }

// TestLoadBoundsAhead: bounds read ahead from a memo are the bounds
// computed, damaged ones are computed afresh, and a memo without bounds
// gets none computed ahead.
func TestLoadBoundsAhead(t *testing.T) {
	img, err := loader.Open("../testdata/prof/bin/unwind-gcc12-O2", loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := NewModule(img).Procs()
	memo := &mapMemo{m: map[string][]byte{}}
	m := NewModule(img)
	m.SetMemo(memo)
	m.Procs() // stores them
	for _, tc := range []struct {
		name   string
		stored []byte
		puts   int // what the reading ahead stores
		loaded bool
	}{
		{"stored", memo.m[memoBounds], 0, true},
		{"damaged", []byte("bloop"), 1, true},
		{"none", nil, 0, false},
	} {
		mm := &mapMemo{m: map[string][]byte{}}
		if tc.stored != nil {
			mm.m[memoBounds] = tc.stored
		}
		m := NewModule(img)
		m.SetMemo(mm)
		m.loadBoundsAhead()
		if mm.puts != tc.puts || (m.procs != nil) != tc.loaded {
			t.Errorf("%s: read ahead: %d stored, bounds set %v; want %d, %v", tc.name, mm.puts, m.procs != nil, tc.puts, tc.loaded)
		}
		if got := m.Procs(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %d procedures, want %d", tc.name, len(got), len(want))
		}
	}
	// From a goroutine, as a report does.
	m = NewModule(img)
	m.SetMemo(&lockedMemo{m: memo})
	m.LoadBoundsAhead()
	if got := m.Procs(); !reflect.DeepEqual(got, want) {
		t.Errorf("read ahead on a goroutine: %d procedures, want %d", len(got), len(want))
	}
}

// lockedMemo is a mapMemo for use from several goroutines.
type lockedMemo struct {
	mu sync.Mutex
	m  *mapMemo
}

func (l *lockedMemo) Get(kind string) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m.Get(kind)
}

func (l *lockedMemo) Put(kind string, b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m.Put(kind, b)
}

// TestMemoSameRecipes: a module whose bounds and jumps come from a memo
// (a warm report) gives the bounds and recipes of one that computes
// them (a cold one), and a damaged memo is recomputed, not believed.
func TestMemoSameRecipes(t *testing.T) {
	const libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	for _, tc := range []struct {
		path  string
		every int // scan every n-th procedure's recipes
	}{
		{"../testdata/prof/bin/unwind-gcc12-O2", 1},
		{libc, 5}, // stripped: inferred bounds
	} {
		t.Run(tc.path, func(t *testing.T) {
			if tc.path == libc {
				if testing.Short() {
					t.Skip("-short")
				}
				testenv.NeedFile(t, libc, "libc6")
			}
			img, err := loader.Open(tc.path, loader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			type result struct {
				procs   []Proc
				recipes [][]Recipe
			}
			run := func(memo Memo) result {
				m := NewModule(img)
				if memo != nil {
					m.SetMemo(memo)
				}
				var r result
				r.procs = m.Procs()
				for i := 0; i < len(r.procs); i += tc.every {
					r.recipes = append(r.recipes, m.Recipes(i))
				}
				m.SaveRecipes()
				return r
			}
			want := run(nil)
			memo := &mapMemo{m: map[string][]byte{}}
			if got := run(memo); !reflect.DeepEqual(got, want) {
				t.Fatal("filling the memo changed the result")
			}
			if memo.puts != 3 || memo.hits != 0 {
				t.Fatalf("cold: %d stored, %d answered; want 3, 0", memo.puts, memo.hits)
			}
			// Warm: the bounds and the recipes answer, the jumps are not
			// needed, nothing is stored.
			if got := run(memo); !reflect.DeepEqual(got, want) {
				t.Error("bounds and recipes from the memo give other recipes")
			}
			if memo.hits != 2 || memo.puts != 3 {
				t.Errorf("warm: %d answered by the memo, %d stored in all; want 2, 3", memo.hits, memo.puts)
			}
			for kind, b := range memo.m {
				memo.m[kind] = b[:len(b)-1]
			}
			if got := run(memo); !reflect.DeepEqual(got, want) {
				t.Error("a damaged memo changed the result")
			}
			if memo.puts != 6 {
				t.Errorf("damaged entries: %d stored in all, want them replaced (6)", memo.puts)
			}
			// Bounds and jumps from the memo, recipes computed from them.
			delete(memo.m, memoRecipes)
			if got := run(memo); !reflect.DeepEqual(got, want) {
				t.Error("bounds and jumps from the memo give other recipes")
			}
		})
	}
}

// TestRecipesAnyOrder: a procedure's recipes are the same whichever
// procedures were asked for before it and however many goroutines ask:
// those of a module asked for that procedure alone, so that they can be
// kept between runs (hot and cold parts, landing pads and stripped code
// among them).
//
// Stripped libstdc++ is where it did not hold before: a hot part and its
// unnamed cold part jump into each other, and the one asked for first
// was scanned with the other from nothing; 24 of its procedures got
// other recipes asked for in backward order than alone (their cold parts
// the entry's frame instead of their hot part's).
func TestRecipesAnyOrder(t *testing.T) {
	const libc, libstdcxx = "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
	for _, tc := range []struct {
		path  string
		every int
		pkg   string
	}{
		{"../testdata/prof/bin/throw-gcc12-O2", 1, ""},
		{"../testdata/prof/bin/unwind-gcc12-O3", 1, ""},
		{"../testdata/prof/bin/unwind-clang14-O2", 1, ""},
		{libc, 11, "libc6"},
		{libstdcxx, 1, "libstdc++6"},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			if tc.pkg != "" {
				if testing.Short() {
					t.Skip("-short")
				}
				testenv.NeedFile(t, tc.path, tc.pkg)
			}
			img, err := loader.Open(tc.path, loader.Options{LazyDWARF: true})
			if err != nil {
				t.Fatal(err)
			}
			memo := &mapMemo{m: map[string][]byte{}} // bounds and jumps shared
			fresh := func() *Module {
				m := NewModule(img)
				m.SetMemo(memo)
				return m
			}
			n := len(fresh().Procs())
			var asked []int
			for i := 0; i < n; i += tc.every {
				asked = append(asked, i)
			}
			// Alone: a module per procedure.
			want := map[int][]Recipe{}
			for _, i := range asked {
				want[i] = fresh().Recipes(i)
			}
			delete(memo.m, memoRecipes)
			for name, order := range map[string][]int{"forward": asked, "backward": reversed(asked)} {
				m := fresh()
				for _, i := range order {
					if got := m.Recipes(i); !reflect.DeepEqual(got, want[i]) {
						t.Fatalf("%s: procedure %d (%s): %v, alone %v", name, i, m.Procs()[i].Name, got, want[i])
					}
				}
			}
			m := fresh()
			var wg sync.WaitGroup
			got := make([][][]Recipe, 3)
			for w := range got {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := range asked {
						got[w] = append(got[w], m.Recipes(asked[(k*7+w*5)%len(asked)]))
					}
				}()
			}
			wg.Wait()
			for w := range got {
				for k, rs := range got[w] {
					if i := asked[(k*7+w*5)%len(asked)]; !reflect.DeepEqual(rs, want[i]) {
						t.Fatalf("side by side: procedure %d: %v, alone %v", i, rs, want[i])
					}
				}
			}
		})
	}
}

func reversed(s []int) []int {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

// TestRecipesStored: stored recipes read back as computed, and a damaged
// or foreign entry is refused.
func TestRecipesStored(t *testing.T) {
	for _, path := range []string{"../testdata/prof/bin/throw-gcc12-O2", "../testdata/bin-arm64/hot-gcc12-O2", "../testdata/bin-ppc64le/hot-gcc12-O2"} {
		img, err := loader.Open(path, loader.Options{LazyDWARF: true})
		if err != nil {
			t.Fatal(err)
		}
		m := NewModule(img)
		done := map[int][]Recipe{}
		for i := range m.Procs() {
			done[i] = m.Recipes(i)
		}
		b := encodeRecipes(done, m.Procs())
		got, err := decodeRecipes(b, m.Procs())
		if err != nil || !reflect.DeepEqual(got, done) {
			t.Fatalf("%s: round trip: %v", path, err)
		}
		for n := len(recipesMagic); n < len(b); n++ {
			if _, err := decodeRecipes(b[:n], m.Procs()); err == nil {
				t.Fatalf("%s: truncated to %d of %d bytes: accepted", path, n, len(b))
			}
		}
		if _, err := decodeRecipes(b, m.Procs()[:len(m.Procs())/2]); err == nil && len(m.Procs()) > 1 {
			t.Errorf("%s: recipes of procedures beyond the bounds accepted", path)
		}
	}
}
