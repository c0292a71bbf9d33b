// Package report prints a profile's text views: the summary, the
// top-down calling-context tree, the bottom-up (callers) tree and the
// flat list of scopes. It reads the model of package profile, which
// knows nothing of it; the trees and entries it prints are the model's
// (profile.ViewTree, BottomUp, Flat), the same the HTML pages show.
package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"bloop/profile"
)

// Options tune the text views.
type Options struct {
	MinPercent float64 // hide nodes below this share of all samples
	MaxDepth   int     // 0: no limit
	Lines      bool    // show statements (source lines) as nodes
}

// TopDown prints the calling-context tree, children sorted by
// inclusive samples. With threads, each thread's tree is printed.
func TopDown(w io.Writer, p *profile.Profile, o Options, threads bool) {
	fmt.Fprintf(w, "incl: samples in the scope and everything below it; excl: samples in the scope itself, in no %s shown below it\n", scopeList(o, "loop", "inlined call", "callee"))
	header(w, p, false)
	if !threads {
		printTree(w, p, profile.ViewTree(p.Root, o.Lines), 0, o)
		return
	}
	tids := make([]uint32, 0, len(p.ThreadTrees()))
	for t := range p.ThreadTrees() {
		tids = append(tids, t)
	}
	sort.Slice(tids, func(i, j int) bool { return tids[i] < tids[j] })
	for _, t := range tids {
		root := p.ThreadTrees()[t]
		if c := p.Comms[t]; c != "" {
			root.Label = fmt.Sprintf("thread %d (%s)", t, c)
		}
		printTree(w, p, profile.ViewTree(root, o.Lines), 0, o)
	}
}

// BottomUp prints the callers view.
func BottomUp(w io.Writer, p *profile.Profile, o Options) {
	fmt.Fprintf(w, "first level: each sample's innermost scope (%s), excl = its samples; below it: the scopes and callers around it, incl = samples that came through them\n", scopeList(o, "loop", "inlined call", "procedure"))
	header(w, p, false)
	printTree(w, p, profile.ViewTree(p.BottomUp(o.Lines), o.Lines), 0, o)
}

// Flat prints the flat view.
func Flat(w io.Writer, p *profile.Profile, o Options) {
	total := float64(max(p.Total, 1))
	fmt.Fprintf(w, "incl: samples with the scope on their call path, once each; excl: samples whose innermost scope (%s) it is\n", scopeList(o, "loop", "inlined call", "procedure"))
	header(w, p, true)
	for _, fe := range p.Flat(o.Lines) {
		if float64(fe.Incl)*100/total < o.MinPercent {
			continue
		}
		kind := map[profile.ElemKind]string{profile.ElemProc: "proc", profile.ElemInline: "inlined", profile.ElemLoop: "loop", profile.ElemStmt: "line"}[fe.Elem.Kind]
		label := fe.Elem.Label() + profile.ModuleSuffix(fe.Elem)
		if fe.Proc != "" {
			label += "  in " + fe.Proc
		}
		fmt.Fprintf(w, "%8s %6.1f%% %8s %6.1f%%%s  %-8s %s\n", val(p, fe.Incl), 100*float64(fe.Incl)/total, val(p, fe.Excl), 100*float64(fe.Excl)/total,
			otherCols(p, fe.EvIncl, fe.EvExcl), kind, label)
	}
}

// scopeList ends a list of the scopes the views show with "or" and
// lines when they are shown (for the legends above the columns).
func scopeList(o Options, kinds ...string) string {
	if o.Lines {
		kinds = append(kinds, "line")
	}
	n := len(kinds)
	return strings.Join(kinds[:n-1], ", ") + " or " + kinds[n-1]
}

// header prints the columns' names: the shown event's incl and excl
// and their shares, then each other event's incl and excl.
func header(w io.Writer, p *profile.Profile, kind bool) {
	if others := otherEvents(p); len(others) > 0 {
		names := p.Meta.EventNames()
		line := fmt.Sprintf("%-33s", "  "+clip(names[p.Event], 31))
		for _, i := range others {
			line += fmt.Sprintf("  %-25s", clip(names[i], 25))
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	fmt.Fprintf(w, "%8s %7s %8s %7s", "incl", "incl%", "excl", "excl%")
	for range otherEvents(p) {
		fmt.Fprintf(w, "  %12s %12s", "incl", "excl")
	}
	if kind {
		fmt.Fprintf(w, "  %-8s %s\n", "kind", "scope")
		return
	}
	fmt.Fprintf(w, "  %s\n", "scope")
}

// otherEvents lists the events shown beside the one the views sort by.
func otherEvents(p *profile.Profile) []int {
	var out []int
	for i := range p.EventTotals {
		if i != p.Event && len(p.EventTotals) > 1 {
			out = append(out, i)
		}
	}
	return out
}

// otherCols formats the other events' columns of a row.
func otherCols(p *profile.Profile, incl, excl []uint64) string {
	var b strings.Builder
	for _, i := range otherEvents(p) {
		fmt.Fprintf(&b, "  %12s %12s", eventVal(p, i, at(incl, i)), eventVal(p, i, at(excl, i)))
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

func printTree(w io.Writer, p *profile.Profile, n *profile.Node, depth int, o Options) {
	total := float64(max(p.Total, 1))
	if float64(n.Incl)*100/total < o.MinPercent || o.MaxDepth > 0 && depth > o.MaxDepth {
		return
	}
	label := n.Label
	if n.Elem != nil {
		label += profile.ModuleSuffix(n.Elem)
	}
	fmt.Fprintf(w, "%8s %6.1f%% %8s %6.1f%%%s  %s%s\n", val(p, n.Incl), 100*float64(n.Incl)/total, val(p, n.Excl), 100*float64(n.Excl)/total,
		otherCols(p, n.EvIncl, n.EvExcl), strings.Repeat("  ", depth), label)
	for _, c := range n.Sorted() {
		printTree(w, p, c, depth+1, o)
	}
}

// val formats a value of the shown event in the event's unit.
func val(p *profile.Profile, v uint64) string { return eventVal(p, p.Event, v) }
