package pipeline

import (
	"slices"

	"bloop/loader"
	"bloop/scopes"
)

// emptyFiles are the files hpcstruct lists without a procedure in them,
// sorted. Dyninst makes a function of each ppc64 local entry a call
// reaches (loader.Image.DyninstEntries); hpcstruct files it under the
// source file of the entry's code and prints nothing of it, its blocks
// being its procedure's, so where that file holds no procedure an empty
// F element remains (stl_iterator.h in tmpl-ppc64le-gcc12-O2, where
// std::__insertion_sort's local entry is inlined std::move code). files
// are the procedures' files.
func emptyFiles(img *loader.Image, subs []*loader.Subprogram, files []string) []string {
	if len(img.DyninstEntries) == 0 {
		return nil
	}
	have := map[string]bool{}
	for _, f := range files {
		have[f] = true
	}
	var out []string
	for i, fn := range img.Funcs {
		if fn.LocalEntry == 0 {
			continue
		}
		if _, ok := slices.BinarySearch(img.DyninstEntries, fn.LocalEntry); !ok {
			continue
		}
		local := *fn
		local.Addr = fn.LocalEntry
		if f := scopes.ProcFile(scopes.Input{Img: img, Func: &local, Sub: subs[i], Hpcstruct: true}); !have[f] {
			have[f] = true
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}
