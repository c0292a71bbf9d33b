// Package diff compares two structure files: exact equality of their
// canonical forms (Equal, Compare), byte-level scope-path agreement
// (Paths, PathAgreement), and a structural report of loop, inline and
// statement differences (Diff), for files and for directories (DiffDirs).
// It is bloop diff's engine.
package diff

import (
	"errors"
	"slices"
	"strings"
	"sync"

	"bloop/structure"
)

// DiffOptions controls Diff.
type DiffOptions struct {
	// Addresses also compares v: of procedures, matched loops, and the
	// statements (per file and line) directly inside matched scopes.
	Addresses bool `json:"addresses"`
	// Detail keeps what a page showing the diff needs (bloop diff
	// --html): each procedure's trees (ProcReport.A, B), the scopes each
	// change is about (Change.InA, InB) and the identical procedures
	// (Report.Same). None of it is in the JSON report.
	Detail bool `json:"-"`
}

// Change kinds, in the order they are listed in a report.
const (
	LoopRemoved    = "loop-removed"
	LoopAdded      = "loop-added"
	LoopMoved      = "loop-moved"
	LoopSplit      = "loop-split"
	LoopFused      = "loop-fused"
	InlineRemoved  = "inline-removed"
	InlineAdded    = "inline-added"
	InlineMoved    = "inline-moved"
	StmtIntoLoop   = "statement-into-loop"
	StmtOutOfLoop  = "statement-out-of-loop"
	AddressChanged = "address"
)

var kindRank = map[string]int{
	LoopRemoved: 0, LoopAdded: 1, LoopMoved: 2, LoopSplit: 3, LoopFused: 4,
	InlineRemoved: 5, InlineAdded: 6, InlineMoved: 7,
	StmtIntoLoop: 8, StmtOutOfLoop: 9, AddressChanged: 10,
}

// Change is one structural difference inside a procedure.
type Change struct {
	Kind string `json:"kind"`
	// Path is the scope inside the procedure, written as in Paths; in b
	// for additions, in a otherwise; "file:line" for statements moving
	// into or out of loops.
	Path string `json:"path"`
	// Old and New: the header line for loop-moved, the call site for
	// inline-moved, v for address (or "(none)").
	Old string `json:"old,omitempty"`
	New string `json:"new,omitempty"`
	// Count: for loop-split / loop-fused, the number of loops on the side
	// that has more; Old and New, when both sides have several, the
	// numbers on each side.
	Count int `json:"count,omitempty"`
	// NestedLoops and NestedInlines: for added and removed loops and
	// inlined calls, the loops and inlined calls inside them (also gone,
	// and included in the summary counts).
	NestedLoops   int `json:"nested_loops,omitempty"`
	NestedInlines int `json:"nested_inlined_calls,omitempty"`
	// NowIn: for a removed loop, where its source lines are in b: the
	// paths of the scopes holding them ("" for the procedure's body),
	// sorted; empty (absent from JSON) when none of them is in b.
	NowIn []string `json:"now_in,omitempty"`
	// InA and InB (with DiffOptions.Detail): the canonical elements the
	// change is about on each side: P for the procedure, L for a loop,
	// the callee A of an inlined call, S for statements. A scope added
	// or removed has on the other side the scopes its enclosing scope was
	// matched with, where it would be.
	InA []*structure.Node `json:"-"`
	InB []*structure.Node `json:"-"`
}

// Diff canonicalizes a and b and reports their structural differences:
// procedures are grouped into source functions (a function's clones and
// outlined parts are one) and functions matched by link name and file
// basename (names.go, functions.go); scopes inside them by kind, file
// basename and line, ignoring addresses and ids unless opts.Addresses is
// set.
func Diff(a, b *structure.Doc, opts DiffOptions) *Report {
	r := &Report{Version: ReportVersion, A: a.Name, B: b.Name, Options: opts, Procedures: []ProcReport{}, Warnings: []string{}}
	// The two sides are read into scope trees side by side.
	var errs [2]error
	var procs [2][]*proc
	var wg sync.WaitGroup
	for i, d := range []*structure.Doc{a, b} {
		wg.Go(func() {
			var c *structure.Doc
			c, errs[i] = structure.Canonicalize(d)
			procs[i] = collectProcs(c)
		})
	}
	wg.Wait()
	for _, e := range errs {
		var re *structure.RangelessError
		if errors.As(e, &re) {
			for _, p := range re.Paths {
				r.Warnings = append(r.Warnings, re.File+": no address range: "+p)
			}
		}
	}
	pa, pb := procs[0], procs[1]
	fa, fb := functions(pa), functions(pb)
	pairs, onlyA, onlyB := pairFunctions(fa, fb)
	for _, fp := range pairs {
		pr := compareFunction(fp.a, fp.b, opts)
		switch {
		case pr.Status != ProcSame:
			r.Procedures = append(r.Procedures, pr)
		case opts.Detail:
			r.Same = append(r.Same, pr)
		}
	}
	inA, inB := inlinedCopies(pa), inlinedCopies(pb)
	var ownA, ownB map[string][]*function
	if len(onlyA)+len(onlyB) > 0 {
		ownA, ownB = lineOwners(fa), lineOwners(fb)
	}
	for _, f := range onlyA {
		r.Procedures = append(r.Procedures, oneSided(f, inB, ownB, false, opts))
	}
	for _, f := range onlyB {
		r.Procedures = append(r.Procedures, oneSided(f, inA, ownA, true, opts))
	}
	slices.SortStableFunc(r.Procedures, cmpProcs)
	slices.SortStableFunc(r.Same, cmpProcs)
	r.summarize()
	return r
}

// compareFunction compares the copies of a function on both sides: which
// copies and parts each has, then the bodies of the copies paired, each
// with its outlined parts as one body.
func compareFunction(fa, fb *function, opts DiffOptions) ProcReport {
	pr := newProcReport(fa, fb, opts)
	pairs, renamed, extraA, extraB := pairVariants(fa.variants, fb.variants)
	var statuses []string
	if renamed {
		statuses = append(statuses, ProcRenamed)
	}
	if len(extraA)+len(extraB) > 0 {
		statuses = append(statuses, ProcCloned)
	}
	split, joined := false, false
	d := &differ{opts: opts}
	for _, vp := range pairs {
		na, nb := vp[0].parts(), vp[1].parts()
		split = split || nb > na
		joined = joined || na > nb
		d.function(vp[0].bodies(), vp[1].bodies())
	}
	if split {
		statuses = append(statuses, ProcSplit)
	}
	if joined {
		statuses = append(statuses, ProcJoined)
	}
	slices.SortStableFunc(d.changes, cmpChange)
	pr.Changes = d.changes
	if pr.Changes == nil {
		pr.Changes = []Change{}
	}
	switch {
	case len(statuses) > 0:
		pr.Status, pr.Also = statuses[0], statuses[1:]
	case len(d.changes) > 0:
		pr.Status = ProcChanged
	default:
		pr.Status = ProcSame
	}
	if len(pr.Also) == 0 {
		pr.Also = nil
	}
	return pr
}

// oneSided is the report of a function on one side only: inlined (or
// outlined) where the other side holds inlined copies of it, a PLT stub,
// folded (unfolded) where another function of the other side has its
// code, or removed (added).
func oneSided(f *function, inOther *inlined, owners map[string][]*function, added bool, opts DiffOptions) ProcReport {
	var pr ProcReport
	if added {
		pr = newProcReport(nil, f, opts)
	} else {
		pr = newProcReport(f, nil, opts)
	}
	pr.Changes = []Change{}
	callers := inOther.callers(f)
	switch {
	case isStub(f.base) && added:
		pr.Status = ProcStubAdded
	case isStub(f.base):
		pr.Status = ProcStubRemoved
	case len(callers) > 0 && added:
		pr.Status, pr.Callers = ProcOutlined, callers
	case len(callers) > 0:
		pr.Status, pr.Callers = ProcInlined, callers
	}
	if pr.Status != "" {
		return pr
	}
	folded := foldedInto(f, owners)
	switch {
	case folded != "" && added:
		pr.Status, pr.Callers = ProcUnfolded, []string{folded}
	case folded != "":
		pr.Status, pr.Callers = ProcFolded, []string{folded}
	case added:
		pr.Status = ProcAdded
	default:
		pr.Status = ProcRemoved
	}
	return pr
}

// newProcReport names a function on side a, side b or both.
func newProcReport(fa, fb *function, opts DiffOptions) ProcReport {
	var all []*proc
	for _, f := range []*function{fa, fb} {
		if f != nil {
			all = append(all, f.procs...)
		}
	}
	f := fa
	if f == nil {
		f = fb
	}
	first := all[0]
	pr := ProcReport{Name: first.name, Pretty: first.pretty, File: f.file}
	several := slices.ContainsFunc(all, func(p *proc) bool { return p.name != first.name })
	if several || !isStub(first.name) && first.name != f.base {
		// Several names, or a clone's: the function's.
		pr.Name, pr.Pretty = f.base, prettyBase(first.node.Value("n"))
		if pr.Pretty == pr.Name {
			pr.Pretty = ""
		}
		for _, s := range []struct {
			f   *function
			out *[]string
		}{{fa, &pr.NamesA}, {fb, &pr.NamesB}} {
			if s.f != nil && !slices.Equal(s.f.names(), []string{pr.Name}) {
				*s.out = s.f.names()
			}
		}
	}
	if opts.Detail {
		pr.A, pr.B = procNodes(fa), procNodes(fb)
	}
	return pr
}

func procNodes(f *function) []ProcNode {
	if f == nil {
		return nil
	}
	out := make([]ProcNode, len(f.procs))
	for i, p := range f.procs {
		out[i] = ProcNode{p.node, p.path}
	}
	return out
}

func cmpProcs(x, y ProcReport) int {
	if c := strings.Compare(x.File, y.File); c != 0 {
		return c
	}
	if c := strings.Compare(x.Name, y.Name); c != 0 {
		return c
	}
	return strings.Compare(x.Status, y.Status)
}

func cmpChange(x, y Change) int {
	if c := kindRank[x.Kind] - kindRank[y.Kind]; c != 0 {
		return c
	}
	for _, c := range []int{strings.Compare(x.Path, y.Path), strings.Compare(x.Old, y.Old), strings.Compare(x.New, y.New)} {
		if c != 0 {
			return c
		}
	}
	if c := x.Count - y.Count; c != 0 {
		return c
	}
	if c := x.NestedLoops - y.NestedLoops; c != 0 {
		return c
	}
	return x.NestedInlines - y.NestedInlines
}

type differ struct {
	opts    DiffOptions
	changes []Change
	// homeB: where each source line of the b body is (lineHomes), for
	// the loops removed.
	homeB map[string][]string
}

func (d *differ) add(c Change) { d.changes = append(d.changes, c) }

// addAt adds c with the scopes it is about on each side, kept when the
// options ask for detail.
func (d *differ) addAt(c Change, as, bs []*scope) {
	if d.opts.Detail {
		c.InA, c.InB = nodesOf(as), nodesOf(bs)
	}
	d.add(c)
}

func nodesOf(ss []*scope) []*structure.Node {
	out := make([]*structure.Node, len(ss))
	for i, s := range ss {
		out[i] = s.node
	}
	return out
}

// function compares the bodies of one copy of a function on each side,
// each with its outlined parts.
func (d *differ) function(as, bs []*scope) {
	d.homeB = lineHomes(bs)
	d.pair(as, bs)
	d.statementMoves(as, bs)
}
