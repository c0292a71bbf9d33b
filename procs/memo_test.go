package procs

import (
	"path/filepath"
	"reflect"
	"testing"

	"bloop/loader"
)

// TestFindShared: the unwinder's and the structure's askings of one image
// share one sweep where no symbol lacks a size, and either way each gets
// exactly the table a fresh computation finds.
func TestFindShared(t *testing.T) {
	for _, bin := range []string{"tmpl-gcc12-O2", "loops-clang14-O2"} {
		img, err := loader.Open(filepath.Join("../testdata/bin", bin), loader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// The stripped program: its PLT stubs (sized) and nothing else; and
		// one symbol without a size, where the option sets differ.
		bare := loader.FromSections(img.Arch, img.Sections, nil)
		unsized := loader.FromSections(img.Arch, img.Sections, nil)
		for _, f := range img.Funcs {
			if f.PLT {
				bare.Funcs = append(bare.Funcs, f)
				unsized.Funcs = append(unsized.Funcs, f)
			}
		}
		unsized.Funcs = append(unsized.Funcs, &loader.Func{Name: "u", Aliases: []string{"u"}, Addr: img.Entry, End: img.Entry + 1})
		for _, c := range []struct {
			img  *loader.Image
			same bool
		}{{bare, true}, {unsized, false}} {
			split, whole := Find(c.img, Options{SplitUnsized: true}), Find(c.img, Options{})
			if (split == whole) != c.same {
				t.Errorf("%s: tables shared %v, want %v", bin, split == whole, c.same)
			}
			if Find(c.img, Options{SplitUnsized: true}) != split {
				t.Errorf("%s: a second asking computed again", bin)
			}
			for _, o := range []Options{{SplitUnsized: true}, {}} {
				if got, want := Find(c.img, o), compute(c.img, o); !reflect.DeepEqual(got, want) {
					t.Errorf("%s %+v: the shared table differs from a fresh one", bin, o)
				}
			}
		}
	}
}
