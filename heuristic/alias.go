package heuristic

import "bloop/loader"

// aliasTol is how far apart the declarators of one body compiled under
// different names may be: the thesis's begin tolerance.
const aliasTol = 5

// findAliases finds procedures whose name the preprocessor chooses:
//
//	#if _GLIBCXX_USE_CXX11_ABI
//	  locale::facet::_M_sso_shim(const locale::id* which) const
//	#else
//	  locale::facet::_M_cow_shim(const locale::id* which) const
//	#endif
//	  { ...
//
// The Non-Overlapping Principle gives the first name a region of two lines
// and the body to the second, so all of the first one's code would look
// inlined. A procedure's entry instruction is its own code, never inlined,
// so when its line lies in a sibling's region that begins just after the
// procedure's, the procedure shares that region.
func (b *Bounds) findAliases(img *loader.Image) {
	if img.Lines == nil {
		return
	}
	for _, sp := range img.Procs {
		d := sp.Desc
		if d == nil || b.alias[d] != nil {
			continue
		}
		r := b.of[d]
		row, ok := img.Lines.Lookup(sp.EntryPC)
		if r == nil || !ok || row.File != d.File || row.Line >= r.begin && row.Line <= r.end {
			continue
		}
		o := b.Owner(row.File, row.Line)
		if o == nil || sameRegion(o, d) || o.Line < d.Line || o.Line-d.Line > aliasTol || o.Parent != d.Parent {
			continue
		}
		b.alias[d] = o
	}
}

// owns reports whether code owned by o (Owner's answer) is native to d.
func (b *Bounds) owns(d, o *loader.Descriptor) bool {
	if sameRegion(o, d) {
		return true
	}
	a := b.alias[d]
	return a != nil && sameRegion(o, a)
}
