package loader

import "bloop/dwarfscan"

// maxNestDepth bounds the walk below a procedure's entries: a damaged tree
// cannot make it run away.
const maxNestDepth = 64

// dyninstDeclNames returns the linkage names that Dyninst 12.3's DWARF
// walk adds to the function of subprogram e besides its own
// (Subprogram.DyninstDeclNames). Its walker parses a function's entry and,
// within that parse and under the same function, the entries its abstract
// origin and its specification point to, each with all its children
// (DwarfWalker::parseSubprogram, parse_int(abstractEntry(), false)). A
// DW_TAG_subprogram met on the way that has no code of its own (a member
// declared in a local class, as a lambda's destructor) finds no function
// by its address and keeps the current one, so its linkage name becomes
// one more name of that function; one with code names its own function,
// and what lies below it is its own.
func (w *unitWalk) dyninstDeclNames(e *dwarfscan.Entry) []string {
	// Below the entry itself nothing is added: its children are walked
	// after its parse has marked the function parsed, and a declaration
	// met then leaves before naming it. fillDecl has counted bad
	// references already.
	var names []string
	for _, a := range []dwarfscan.Attr{dwarfscan.AttrAbstractOrigin, dwarfscan.AttrSpecification} {
		if off, ok := e.Ref(a); ok {
			names = w.declNamesBelow(off, names)
		}
	}
	return names
}

// declNamesBelow appends the linkage names of the code-less subprograms in
// the tree below the entry at off, not descending into those with code.
func (w *unitWalk) declNamesBelow(off uint64, names []string) []string {
	w.cover(off)
	if w.nest == nil {
		w.nest = w.d.Reader()
	}
	rd := w.nest
	var e dwarfscan.Entry
	if rd.Seek(off) != nil || rd.Next(&e) != nil || e.Tag == 0 || !e.Children {
		return names
	}
	for depth := 1; depth > 0; {
		if rd.Next(&e) != nil {
			return names
		}
		if e.Tag == 0 {
			depth--
			continue
		}
		if e.Tag == dwarfscan.TagSubprogram {
			_, low := e.Field(dwarfscan.AttrLowPC)
			if _, rs := e.Field(dwarfscan.AttrRanges); low || rs {
				if e.Children {
					rd.SkipChildren()
				}
				continue
			}
			if n, ok := e.String(dwarfscan.AttrLinkageName); ok {
				names = append(names, n)
			}
		}
		if e.Children {
			if depth == maxNestDepth {
				rd.SkipChildren()
				continue
			}
			depth++
		}
	}
	return names
}
