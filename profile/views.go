package profile

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// ViewOptions tune the text views.
type ViewOptions struct {
	MinPercent float64 // hide nodes below this share of all samples
	MaxDepth   int     // 0: no limit
	Lines      bool    // show statements (source lines) as nodes
}

// WriteSummary prints what was recorded and how well it unwound. Lost
// samples and truncated stacks are always shown.
func (p *Profile) WriteSummary(w io.Writer) {
	if p.Meas != nil {
		p.writeMeasSummary(w)
		return
	}
	if p.Meta.Perf {
		p.writePerfSummary(w)
		return
	}
	fmt.Fprintf(w, "command:  %s\n", strings.Join(p.Meta.Command, " "))
	fmt.Fprintf(w, "event:    %s at %d Hz, %d bytes of stack per sample\n", p.Meta.Event, p.Meta.Freq, p.Meta.StackSize)
	if p.HasStats {
		fmt.Fprintf(w, "run:      %.3fs, %s\n", time.Duration(p.Stats.DurationNanos).Seconds(), p.Stats.Fate())
	}
	fmt.Fprintf(w, "samples:  %d, lost %d", p.Samples, p.Lost)
	if p.HasStats {
		fmt.Fprintf(w, ", stack copies full %d, throttled %d", p.Stats.FullStacks, p.Stats.Throttles)
	}
	fmt.Fprintln(w)
	p.writeUnwind(w, p.Samples)
}

// writeUnwind says how the n unwound samples unwound, and why some failed,
// and which modules could not be read.
func (p *Profile) writeUnwind(w io.Writer, n uint64) {
	pct := func(k uint64) float64 { return 100 * float64(k) / float64(max(n, 1)) }
	fmt.Fprintf(w, "unwind:   %.2f%% to the process/thread entry with recipes (%d complete, %d truncated stack, %d failed; %d frames without recipe, by frame pointer or stack scan)\n",
		pct(p.Outcomes[Complete]), p.Outcomes[Complete], p.Outcomes[Truncated], p.Outcomes[Failed], p.FPSteps)
	// What a frame-pointer unwinder (perf's default) gets on the same
	// samples: the measure of what the recipes are worth on this program.
	fmt.Fprintf(w, "          for comparison, frame pointers alone (as perf's default unwinder) would reach it for %.2f%% (%d complete, %d truncated stack, %d failed)\n",
		pct(p.FPOutcomes[Complete]), p.FPOutcomes[Complete], p.FPOutcomes[Truncated], p.FPOutcomes[Failed])
	reasons := make([]string, 0, len(p.Reasons))
	for r := range p.Reasons {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool { return p.Reasons[reasons[i]] > p.Reasons[reasons[j]] })
	for _, r := range reasons {
		fmt.Fprintf(w, "          failed: %s (%d)\n", r, p.Reasons[r])
	}
	p.writeModuleErrors(w)
}

// writeModuleErrors names the modules that could not be read, and why.
func (p *Profile) writeModuleErrors(w io.Writer) {
	for _, m := range p.Modules {
		if m.Err != nil {
			fmt.Fprintf(w, "module:   %s: %v\n", m.Path, m.Err)
		}
	}
}

// WriteTopDown prints the calling-context tree, children sorted by
// inclusive samples. With threads, each thread's tree is printed.
func (p *Profile) WriteTopDown(w io.Writer, o ViewOptions, threads bool) {
	fmt.Fprintf(w, "incl: samples in the scope and everything below it; excl: samples in the scope itself, in no %s shown below it\n", scopeList(o, "loop", "inlined call", "callee"))
	p.header(w, false)
	if !threads {
		p.printTree(w, viewTree(p.Root, o), 0, o)
		return
	}
	tids := make([]uint32, 0, len(p.Threads))
	for t := range p.Threads {
		tids = append(tids, t)
	}
	sort.Slice(tids, func(i, j int) bool { return tids[i] < tids[j] })
	for _, t := range tids {
		root := p.Threads[t]
		if c := p.Comms[t]; c != "" {
			root.Label = fmt.Sprintf("thread %d (%s)", t, c)
		}
		p.printTree(w, viewTree(root, o), 0, o)
	}
}

// scopeList ends a list of the scopes the views show with "or" and
// lines when they are shown (for the legends above the columns).
func scopeList(o ViewOptions, kinds ...string) string {
	if o.Lines {
		kinds = append(kinds, "line")
	}
	n := len(kinds)
	return strings.Join(kinds[:n-1], ", ") + " or " + kinds[n-1]
}

// viewTree drops the statement nodes unless lines are wanted, merging the
// scopes below statements of one context (calls from several lines); a
// dropped line's samples become its scope's own (excl).
func viewTree(n *Node, o ViewOptions) *Node {
	if o.Lines {
		return n
	}
	out := &Node{Elem: n.Elem, Label: n.Label}
	out.addVals(n.Incl, n.Excl, n.EvIncl, n.EvExcl)
	levels := 1
	var add func(c *Node)
	add = func(c *Node) {
		if c.Elem != nil && c.Elem == n.Elem && n.Elem.Kind == ElemProc {
			// Direct recursion: fold the callee into this node.
			levels++
			out.addVals(0, c.Excl, nil, c.EvExcl)
			for _, g := range c.Children {
				add(g)
			}
			return
		}
		if c.Elem != nil && c.Elem.Kind == ElemStmt {
			out.addVals(0, c.Excl, nil, c.EvExcl)
			for _, g := range c.Children {
				add(g)
			}
			return
		}
		out.adopt(viewTree(c, o))
	}
	for _, c := range n.Children {
		add(c)
	}
	if levels > 1 {
		out.Label = fmt.Sprintf("%s (recursion, up to %d levels)", out.Label, levels)
	}
	return out
}

// merge adds the counts and children of b to a (same scope).
func merge(a, b *Node) {
	a.addVals(b.Incl, b.Excl, b.EvIncl, b.EvExcl)
	for _, c := range b.Children {
		a.adopt(c)
	}
}

// header prints the columns' names: the shown event's incl and excl
// and their shares, then each other event's incl and excl.
func (p *Profile) header(w io.Writer, kind bool) {
	if others := p.otherEvents(); len(others) > 0 {
		names := p.Meta.EventNames()
		line := fmt.Sprintf("%-33s", "  "+clip(names[p.Event], 31))
		for _, i := range others {
			line += fmt.Sprintf("  %-25s", clip(names[i], 25))
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	fmt.Fprintf(w, "%8s %7s %8s %7s", "incl", "incl%", "excl", "excl%")
	for range p.otherEvents() {
		fmt.Fprintf(w, "  %12s %12s", "incl", "excl")
	}
	if kind {
		fmt.Fprintf(w, "  %-8s %s\n", "kind", "scope")
		return
	}
	fmt.Fprintf(w, "  %s\n", "scope")
}

// otherEvents lists the events shown beside the one the views sort by.
func (p *Profile) otherEvents() []int {
	var out []int
	for i := range p.EventTotals {
		if i != p.Event && len(p.EventTotals) > 1 {
			out = append(out, i)
		}
	}
	return out
}

// otherCols formats the other events' columns of a row.
func (p *Profile) otherCols(incl, excl []uint64) string {
	var b strings.Builder
	for _, i := range p.otherEvents() {
		fmt.Fprintf(&b, "  %12s %12s", p.eventVal(i, at(incl, i)), p.eventVal(i, at(excl, i)))
	}
	return b.String()
}

func at(v []uint64, i int) uint64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n-1] + "~"
	}
	return s
}

func (p *Profile) printTree(w io.Writer, n *Node, depth int, o ViewOptions) {
	total := float64(max(p.Total, 1))
	if float64(n.Incl)*100/total < o.MinPercent || o.MaxDepth > 0 && depth > o.MaxDepth {
		return
	}
	label := n.Label
	if n.Elem != nil {
		label += moduleSuffix(n.Elem)
	}
	fmt.Fprintf(w, "%8s %6.1f%% %8s %6.1f%%%s  %s%s\n", p.val(n.Incl), 100*float64(n.Incl)/total, p.val(n.Excl), 100*float64(n.Excl)/total,
		p.otherCols(n.EvIncl, n.EvExcl), strings.Repeat("  ", depth), label)
	for _, c := range sorted(n.Children) {
		p.printTree(w, c, depth+1, o)
	}
}

// moduleSuffix names the load module of a procedure, unless its name
// already does (structure files name the module of unsymbolized code).
func moduleSuffix(e *Elem) string {
	if e.Kind != ElemProc || e.Module == "" {
		return ""
	}
	m := e.Module
	if !strings.HasPrefix(m, "[") {
		m = "[" + m + "]"
	}
	if strings.Contains(e.Name, m) {
		return ""
	}
	return "  " + m
}

// sorted orders nodes by inclusive samples, then label.
func sorted(ns []*Node) []*Node {
	out := append([]*Node(nil), ns...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Incl != out[j].Incl {
			return out[i].Incl > out[j].Incl
		}
		return out[i].Label < out[j].Label
	})
	return out
}

// BottomUp builds the top-down tree inverted: its first level is each
// sample's innermost scope (a loop, inlined call or procedure; with lines,
// a line), below it the scopes enclosing it and the callers it was reached
// through, outward. So a scope's excl is the same as in the other views.
func (p *Profile) BottomUp(lines bool) *Node {
	root := &Node{Label: "<program>"}
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.hasExcl() {
			root.addVals(n.Excl, 0, n.EvExcl, nil)
			cur := root
			for a := n; a != nil && a.Elem != nil; a = a.Parent {
				if a.Elem.Kind == ElemStmt && !lines {
					continue
				}
				cur = cur.child(a.Elem)
				cur.addVals(n.Excl, 0, n.EvExcl, nil)
				if cur.Parent == root {
					cur.addVals(0, n.Excl, nil, n.EvExcl) // the innermost scope
				}
			}
			if cur == root {
				root.addVals(0, n.Excl, nil, n.EvExcl) // a sample without scopes
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(p.Root)
	return root
}

// WriteBottomUp prints the callers view.
func (p *Profile) WriteBottomUp(w io.Writer, o ViewOptions) {
	fmt.Fprintf(w, "first level: each sample's innermost scope (%s), excl = its samples; below it: the scopes and callers around it, incl = samples that came through them\n", scopeList(o, "loop", "inlined call", "procedure"))
	p.header(w, false)
	p.printTree(w, viewTree(p.BottomUp(o.Lines), o), 0, o)
}

// FlatEntry is one static scope with its samples over all contexts.
type FlatEntry struct {
	Elem *Elem
	// Proc is, for loops and inlined code, the enclosing procedure; for a
	// line, the function (procedure or inlined) whose code it is.
	Proc           string
	Incl, Excl     uint64
	EvIncl, EvExcl []uint64 // every event's, as in Node
}

// flatKey identifies a flat entry: a scope, or a line of a function (the
// structure has one statement scope per line and loop, the view one entry).
type flatKey struct {
	elem *Elem
	fn   *Elem
	file string
	line int
}

// Flat aggregates samples by static scope (procedures, inlined
// procedures and loops as peers; with lines, source lines too): incl
// counts each scope once per sample that has it on its path, excl the
// samples whose innermost scope it is.
func (p *Profile) Flat(lines bool) []FlatEntry {
	acc := map[flatKey]*FlatEntry{}
	var order []*FlatEntry // first met first: ties keep one order
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.hasExcl() {
			seen := map[flatKey]bool{}
			innermost := true
			for a := n; a != nil && a.Elem != nil; a = a.Parent {
				if a.Elem.Kind == ElemStmt && !lines {
					continue
				}
				k, owner := flatKeyOf(a)
				fe := acc[k]
				if fe == nil {
					fe = &FlatEntry{Elem: a.Elem, Proc: owner}
					acc[k] = fe
					order = append(order, fe)
				}
				if !seen[k] {
					seen[k] = true
					fe.Incl += n.Excl
					fe.EvIncl = addVec(fe.EvIncl, n.EvExcl)
				}
				if innermost {
					fe.Excl += n.Excl
					fe.EvExcl = addVec(fe.EvExcl, n.EvExcl)
					innermost = false
				}
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(p.Root)
	out := make([]FlatEntry, 0, len(order))
	for _, fe := range order {
		out = append(out, *fe)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Incl != b.Incl {
			return a.Incl > b.Incl
		}
		if a.Elem.Kind != b.Elem.Kind {
			return a.Elem.Kind < b.Elem.Kind
		}
		if a.Elem.Label() != b.Elem.Label() {
			return a.Elem.Label() < b.Elem.Label()
		}
		return a.Proc < b.Proc
	})
	return out
}

// flatKeyOf returns the flat entry of node a and the name the view shows
// it in: the enclosing procedure of a loop or inlined call, the function
// of a line.
func flatKeyOf(a *Node) (flatKey, string) {
	e := a.Elem
	if e.Kind == ElemProc {
		return flatKey{elem: e}, ""
	}
	for q := a.Parent; q != nil && q.Elem != nil; q = q.Parent {
		switch k := q.Elem.Kind; {
		case e.Kind == ElemStmt && (k == ElemProc || k == ElemInline):
			return flatKey{fn: q.Elem, file: e.File, line: e.Line}, q.Elem.Name
		case e.Kind != ElemStmt && k == ElemProc:
			return flatKey{elem: e}, q.Elem.Name
		}
	}
	if e.Kind == ElemStmt {
		return flatKey{file: e.File, line: e.Line}, ""
	}
	return flatKey{elem: e}, ""
}

// WriteFlat prints the flat view.
func (p *Profile) WriteFlat(w io.Writer, o ViewOptions) {
	total := float64(max(p.Total, 1))
	fmt.Fprintf(w, "incl: samples with the scope on their call path, once each; excl: samples whose innermost scope (%s) it is\n", scopeList(o, "loop", "inlined call", "procedure"))
	p.header(w, true)
	for _, fe := range p.Flat(o.Lines) {
		if float64(fe.Incl)*100/total < o.MinPercent {
			continue
		}
		kind := map[ElemKind]string{ElemProc: "proc", ElemInline: "inlined", ElemLoop: "loop", ElemStmt: "line"}[fe.Elem.Kind]
		label := fe.Elem.Label() + moduleSuffix(fe.Elem)
		if fe.Proc != "" {
			label += "  in " + fe.Proc
		}
		fmt.Fprintf(w, "%8s %6.1f%% %8s %6.1f%%%s  %-8s %s\n", p.val(fe.Incl), 100*float64(fe.Incl)/total, p.val(fe.Excl), 100*float64(fe.Excl)/total,
			p.otherCols(fe.EvIncl, fe.EvExcl), kind, label)
	}
}

// val formats a value of the shown event in the event's unit.
func (p *Profile) val(w uint64) string { return p.eventVal(p.Event, w) }

// hasExcl reports whether samples of any event end at n.
func (n *Node) hasExcl() bool {
	if n.Excl > 0 {
		return true
	}
	for _, v := range n.EvExcl {
		if v > 0 {
			return true
		}
	}
	return false
}
