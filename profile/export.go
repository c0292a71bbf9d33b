package profile

// Accessors for the presentations of the views (the text views of
// package report, the HTML page of package view), so that they show the
// same trees without copying their rules.

// ViewTree returns the tree the views show for n: statements dropped
// unless lines (their samples become their scope's excl) and direct
// recursion folded into one node. The text views' MinPercent and
// MaxDepth are not applied: they only limit what is printed.
func ViewTree(n *Node, lines bool) *Node { return viewTree(n, lines) }

// Sorted returns n's children in the order the views show them: by
// inclusive samples, then label.
func (n *Node) Sorted() []*Node { return sorted(n.Children) }

// ModuleSuffix is what the views add to a scope's label: for a
// procedure, its load module unless the name says it already.
func ModuleSuffix(e *Elem) string { return moduleSuffix(e) }

// LoopLines returns, for each loop of the modules' structure met by the
// samples, its header line and the last line of the statements below it
// in its own file (all statements, not only sampled ones; inlined code
// left out). Statements above the header (a procedure's first line,
// where compilers put the loop's bound checks) do not extend it.
func (p *Profile) LoopLines() map[*Elem][2]int {
	out := map[*Elem][2]int{}
	for _, m := range p.Modules {
		if m.index == nil {
			continue
		}
		for _, en := range m.index.entries {
			st := en.path[len(en.path)-1]
			if st.Kind != ElemStmt {
				continue
			}
			// The loops around the statement in its own function's code:
			// up to the innermost inlined call or procedure.
			for i := len(en.path) - 2; i >= 0; i-- {
				e := en.path[i]
				if e.Kind == ElemInline || e.Kind == ElemProc {
					break
				}
				if e.Kind != ElemLoop || e.File != st.File {
					continue
				}
				r, ok := out[e]
				if !ok {
					r = [2]int{e.Line, e.Line}
				}
				r[1] = max(r[1], st.Line)
				out[e] = r
			}
		}
	}
	return out
}
