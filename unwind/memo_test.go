package unwind

import (
	"reflect"
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
				return r
			}
			want := run(nil)
			memo := &mapMemo{m: map[string][]byte{}}
			if got := run(memo); !reflect.DeepEqual(got, want) {
				t.Fatal("filling the memo changed the result")
			}
			if memo.puts != 2 || memo.hits != 0 {
				t.Fatalf("cold: %d stored, %d answered; want 2, 0", memo.puts, memo.hits)
			}
			if got := run(memo); !reflect.DeepEqual(got, want) {
				t.Error("bounds and jumps from the memo give other recipes")
			}
			if memo.hits != 2 {
				t.Errorf("warm: %d answered by the memo, want 2", memo.hits)
			}
			for kind, b := range memo.m {
				memo.m[kind] = b[:len(b)-1]
			}
			if got := run(memo); !reflect.DeepEqual(got, want) {
				t.Error("a damaged memo changed the result")
			}
			if memo.puts != 4 {
				t.Errorf("damaged entries: %d stored in all, want them replaced (4)", memo.puts)
			}
		})
	}
}
