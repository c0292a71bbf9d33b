package normalize

import "bloop/structure"

// instance is one occurrence of a source line inside a procedure context,
// with the loops that enclose it (outermost first) within that context.
type instance struct {
	stmt  *structure.Scope
	owner *structure.Scope   // the scope whose child stmt is
	loops []*structure.Scope // loops between the context and owner
}

// CoalesceDuplicateStatements applies the thesis's two rules within every
// procedure context (never across contexts):
//   - a line in two or more disjoint loop nests: the nests are fused;
//   - a line at several levels of one loop nest (including outside it, as
//     loop-invariant code motion leaves it): only the deepest instance stays.
//
// It reports whether the tree changed.
func CoalesceDuplicateStatements(p *structure.Scope) bool {
	changed := false
	forEachContext(p, p.File, func(ctx *structure.Scope, file string) {
		for coalesceOnce(ctx, file) {
			changed = true
		}
	})
	return changed
}

// forEachContext calls f for p and every alien context below it.
func forEachContext(s *structure.Scope, file string, f func(*structure.Scope, string)) {
	f(s, file)
	var walk func(x *structure.Scope, file string)
	walk = func(x *structure.Scope, file string) {
		for _, c := range x.Children {
			cf := file
			if c.Kind == structure.Loop && c.File != "" {
				cf = c.File
			}
			if c.Kind == structure.Alien {
				if c.File != "" {
					cf = c.File
				}
				f(c, cf)
			}
			walk(c, cf)
		}
	}
	walk(s, file)
}

// collect gathers the statement instances of one context, not descending
// into nested contexts.
func collect(ctx *structure.Scope, file string) map[lineKey][]instance {
	out := map[lineKey][]instance{}
	var walk func(x *structure.Scope, loops []*structure.Scope, file string)
	walk = func(x *structure.Scope, loops []*structure.Scope, file string) {
		for _, c := range x.Children {
			switch c.Kind {
			case structure.Stmt:
				// A call site (GPU code) stays one instruction.
				if c.Line > 0 && len(c.Ranges) > 0 && c.Call == nil {
					k := lineKey{stmtFile(c, file), c.Line}
					out[k] = append(out[k], instance{c, x, loops})
				}
			case structure.Loop:
				lf := file
				if c.File != "" {
					lf = c.File
				}
				walk(c, append(append([]*structure.Scope(nil), loops...), c), lf)
			}
		}
	}
	walk(ctx, nil, file)
	return out
}

// coalesceOnce applies one rule once; it reports whether it did.
func coalesceOnce(ctx *structure.Scope, file string) bool {
	insts := collect(ctx, file)
	keys := make([]lineKey, 0, len(insts))
	for k, v := range insts {
		if len(v) > 1 {
			keys = append(keys, k)
		}
	}
	sortKeys(keys)
	for _, k := range keys {
		v := insts[k]
		// Rule 2: instances on one path of the nest keep only the deepest.
		deep := v[0]
		for _, in := range v[1:] {
			if len(in.loops) > len(deep.loops) {
				deep = in
			}
		}
		merged := false
		for _, in := range v {
			if in.stmt != deep.stmt && isPrefix(in.loops, deep.loops) {
				mergeStmt(deep.stmt, in.stmt)
				removeChild(in.owner, in.stmt)
				merged = true
			}
		}
		if merged {
			return true
		}
		// Rule 1: instances in disjoint nests fuse the nests below their
		// common ancestor.
		a, b := v[0], v[1]
		n := commonPrefix(a.loops, b.loops)
		if n < len(a.loops) && n < len(b.loops) {
			parent := ctx
			if n > 0 {
				parent = a.loops[n-1]
			}
			fuseLoops(parent, a.loops[n], b.loops[n])
			return true
		}
	}
	return false
}

// fuseLoops merges loop b into loop a (both children of parent).
func fuseLoops(parent, a, b *structure.Scope) {
	a.Children = append(a.Children, b.Children...)
	if b.Entry < a.Entry {
		a.Entry = b.Entry
	}
	if b.Line > 0 && (a.Line == 0 || b.Line < a.Line) {
		a.Line = b.Line
	}
	removeChild(parent, b)
	mergeSameLineStmts(a)
}

// mergeSameLineStmts joins direct statements of s that share a line.
func mergeSameLineStmts(s *structure.Scope) {
	seen := map[lineKey]*structure.Scope{}
	out := s.Children[:0]
	for _, c := range s.Children {
		if c.Kind == structure.Stmt && c.Call == nil {
			k := lineKey{c.File, c.Line}
			if d, ok := seen[k]; ok {
				mergeStmt(d, c)
				continue
			}
			seen[k] = c
		}
		out = append(out, c)
	}
	s.Children = out
}

func isPrefix(a, b []*structure.Scope) bool {
	return len(a) <= len(b) && commonPrefix(a, b) == len(a)
}

func commonPrefix(a, b []*structure.Scope) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func sortKeys(ks []lineKey) {
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && (ks[j].file < ks[j-1].file || ks[j].file == ks[j-1].file && ks[j].line < ks[j-1].line); j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
}
