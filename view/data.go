// Package view makes bloop's HTML pages: one self-contained file per page
// (data, script and style inline; nothing fetched), so that it opens from
// disk in any browser, as a CI artifact or an attachment to a bug report.
// The Go side turns bloop's models into the page's data (plain structs
// serialised as JSON, with the enums the scripts compare against: see
// enums.go); the pages themselves are the hand-written JavaScript and
// CSS files of assets/ in the html/template skeletons of templates/,
// embedded. Their browser tests are the nested module bloop/browser.
package view

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"bloop/profile"
	"bloop/report"
)

// ReportData is what the report page embeds. It is made compact for
// large profiles: strings are indices into Strings, scopes into Scopes,
// and trees and tables are columns (arrays per field) rather than
// objects per row. Values are per metric (one column per event), so
// Incl[m][i] is metric m's inclusive value of row i.
type ReportData struct {
	Version int    `json:"version"`
	Command string `json:"command"`
	// Summary is bloop report's summary, as printed.
	Summary string `json:"summary"`
	Samples uint64 `json:"samples"`
	Lost    uint64 `json:"lost"`
	// Unwind counts the unwound samples by outcome: complete,
	// truncated stack, failed. Chains counts perf.data samples taken
	// as recorded (not unwound).
	Unwind  [3]uint64 `json:"unwind"`
	Chains  uint64    `json:"chains"`
	Metrics []Metric  `json:"metrics"`
	Strings []string  `json:"strings"`
	Scopes  Scopes    `json:"scopes"`
	// Threads are the trees the thread selector offers: all threads
	// merged first, then each thread when there are several.
	Threads []Thread `json:"threads"`
	// Files are the source files samples reach, by the line table's path.
	Files []File `json:"files"`

	// sourceIDs are the build-ids a source file is fetched by, when the
	// page's sources may be fetched (WriteReport).
	sourceIDs map[string][][]byte
}

// Metric is one column of values: an event.
type Metric struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
}

// Scopes are the static scopes the trees and tables name (procedures,
// inlined calls, loops), by index. Strings are indices into
// ReportData.Strings (0 is ""). Line is a procedure's or callee's
// declaration line, a loop's header; First and Last are a loop's extent
// in its file (0 when unknown).
type Scopes struct {
	Kind     []int `json:"kind"` // profile.ElemKind: 0 procedure, 1 inlined call, 2 loop
	Label    []int `json:"label"`
	Name     []int `json:"name"`
	Module   []int `json:"module"`
	File     []int `json:"file"`
	Line     []int `json:"line"`
	CallFile []int `json:"callFile"`
	CallLine []int `json:"callLine"`
	First    []int `json:"first"`
	Last     []int `json:"last"`
}

// Thread holds one tree's views, as bloop report prints them (without
// --lines), and the samples per source line. As in bloop report, only
// the top-down view is per thread (--threads): the bottom-up and flat
// views are of all threads, in the first Thread only (they are most of
// the data: a bottom-up tree can be ten times the top-down one).
type Thread struct {
	Name   string `json:"name"`
	Top    Tree   `json:"top"`
	Bottom *Tree  `json:"bottom,omitempty"`
	Flat   *Flat  `json:"flat,omitempty"`
	Lines  Lines  `json:"lines"`
}

// Tree is a view's tree in preorder, children in the text view's order:
// each node's scope (-1 for the root) and number of children.
type Tree struct {
	Scope []int      `json:"scope"`
	Kids  []int      `json:"kids"`
	Incl  [][]uint64 `json:"incl"`
	Excl  [][]uint64 `json:"excl"`
	// Labels are pairs (node, string) for the nodes the view names
	// otherwise than their scope's label: the root, folded recursion.
	Labels []int `json:"labels"`
}

// Flat is the flat view's rows in its order: the scope and, for loops
// and inlined calls, the enclosing procedure's name (string index).
type Flat struct {
	Scope []int      `json:"scope"`
	Proc  []int      `json:"proc"`
	Incl  [][]uint64 `json:"incl"`
	Excl  [][]uint64 `json:"excl"`
}

// Lines are the source lines samples reach: file (string index) and
// line, with the samples whose innermost scope is the line (Excl) and
// those that have it anywhere on their path, once each (Incl).
type Lines struct {
	File []int      `json:"file"`
	Line []int      `json:"line"`
	Incl [][]uint64 `json:"incl"`
	Excl [][]uint64 `json:"excl"`
}

// builder assigns string and scope indices in order of first use, so
// that the same profile gives the same data.
type builder struct {
	d       *ReportData
	strs    map[string]int
	scopes  map[*profile.Elem]int
	loops   map[*profile.Elem][2]int
	metrics int
	// others are the events after the shown one, in Meta's order: the
	// columns after the first.
	others []int
}

func (b *builder) str(s string) int {
	if i, ok := b.strs[s]; ok {
		return i
	}
	i := len(b.d.Strings)
	b.d.Strings = append(b.d.Strings, s)
	b.strs[s] = i
	return i
}

func (b *builder) scope(e *profile.Elem) int {
	if i, ok := b.scopes[e]; ok {
		return i
	}
	s := &b.d.Scopes
	i := len(s.Kind)
	b.scopes[e] = i
	s.Kind = append(s.Kind, int(e.Kind))
	s.Label = append(s.Label, b.str(e.Label()+profile.ModuleSuffix(e)))
	s.Name = append(s.Name, b.str(e.Name))
	s.Module = append(s.Module, b.str(e.Module))
	s.File = append(s.File, b.str(e.File))
	s.Line = append(s.Line, e.Line)
	s.CallFile = append(s.CallFile, b.str(e.CallFile))
	s.CallLine = append(s.CallLine, e.CallLine)
	ext := b.loops[e]
	s.First = append(s.First, ext[0])
	s.Last = append(s.Last, ext[1])
	return i
}

// columns makes one value column per metric.
func (b *builder) columns() [][]uint64 {
	c := make([][]uint64, b.metrics)
	for i := range c {
		c[i] = []uint64{}
	}
	return c
}

// Report turns an attributed recording into the report page's data.
// Sources are not read here: see Options and WriteReport.
func Report(p *profile.Profile) *ReportData {
	d := &ReportData{Version: 1, Command: strings.Join(p.Meta.Command, " "), Samples: p.Samples, Lost: p.Lost,
		Unwind: p.Outcomes, Chains: p.Chains, Strings: []string{""}, Threads: []Thread{}, Files: []File{}}
	var sum bytes.Buffer
	report.Summary(&sum, p)
	d.Summary = sum.String()
	d.Metrics = []Metric{metricOf(p, p.Event)}
	var others []int
	if n := len(p.Meta.EventNames()); n > 1 {
		for i := 0; i < n; i++ {
			if i != p.Event {
				others = append(others, i)
				d.Metrics = append(d.Metrics, metricOf(p, i))
			}
		}
	}
	b := &builder{d: d, strs: map[string]int{"": 0}, scopes: map[*profile.Elem]int{}, loops: p.LoopLines(), metrics: len(d.Metrics), others: others}
	all := b.thread("all threads", p.Root, "<program>")
	one := &profile.Profile{Root: p.Root}
	bottom := b.tree(profile.ViewTree(one.BottomUp(false), false), "<program>")
	all.Bottom = &bottom
	all.Flat = b.flat(one)
	d.Threads = append(d.Threads, all)
	if len(p.ThreadTrees()) > 1 {
		tids := make([]uint32, 0, len(p.ThreadTrees()))
		for t := range p.ThreadTrees() {
			tids = append(tids, t)
		}
		sort.Slice(tids, func(i, j int) bool { return tids[i] < tids[j] })
		for _, t := range tids {
			// The label bloop report --threads gives the thread's root.
			name := fmt.Sprintf("thread %d", t)
			if c := p.Comms[t]; c != "" {
				name = fmt.Sprintf("thread %d (%s)", t, c)
			}
			d.Threads = append(d.Threads, b.thread(name, p.ThreadTrees()[t], name))
		}
	}
	return d
}

// metricOf names the event the profile's trees hold and what its values
// count: samples in bloop's recordings, periods in perf.data files, a
// measurement directory's metric values. Time is in a unit the page's
// bloop.time knows (ns for perf's clocks and hpcrun's metrics in
// seconds, held in nano-units), which it shows as s, ms or µs.
func metricOf(p *profile.Profile, ev int) Metric {
	names := p.Meta.EventNames()
	name := p.Meta.Event
	if ev < len(names) {
		name = names[ev]
	}
	if u, ok := timeUnitNames[p.EventNanos(ev)]; ok {
		return Metric{Name: name, Unit: u}
	}
	switch {
	case p.Meas != nil && ev < len(p.EventScale) && p.EventScale[ev] != 1:
		return Metric{Name: name, Unit: "nano-units"} // hpcrun's real metrics
	case p.Meas != nil:
		return Metric{Name: name, Unit: "events"}
	case !p.Meta.Perf:
		return Metric{Name: name, Unit: "samples"}
	}
	return Metric{Name: name, Unit: "events"}
}

// timeUnitNames are the units of time the page shows as time, by their
// nanoseconds (common.js's bloop.timeUnits).
var timeUnitNames = map[float64]string{1: "ns", 1e3: "us", 1e6: "ms", 1e9: "s"}

// thread makes one tree's top-down view, as the text report prints it,
// and its samples per line.
func (b *builder) thread(name string, root *profile.Node, rootLabel string) Thread {
	return Thread{Name: name, Top: b.tree(profile.ViewTree(root, false), rootLabel), Lines: b.lines(root)}
}

// flat makes the flat view's rows.
func (b *builder) flat(p *profile.Profile) *Flat {
	f := &Flat{Scope: []int{}, Proc: []int{}, Incl: b.columns(), Excl: b.columns()}
	for _, fe := range p.Flat(false) {
		f.Scope = append(f.Scope, b.scope(fe.Elem))
		f.Proc = append(f.Proc, b.str(fe.Proc))
		b.push(f.Incl, fe.Incl, fe.EvIncl)
		b.push(f.Excl, fe.Excl, fe.EvExcl)
	}
	return f
}

// tree lays a view's tree out in preorder.
func (b *builder) tree(root *profile.Node, rootLabel string) Tree {
	t := Tree{Scope: []int{}, Kids: []int{}, Incl: b.columns(), Excl: b.columns(), Labels: []int{}}
	var walk func(n *profile.Node)
	walk = func(n *profile.Node) {
		i := len(t.Scope)
		kids := n.Sorted()
		sc, label := -1, rootLabel
		if n.Elem != nil {
			sc, label = b.scope(n.Elem), n.Label
			if label == n.Elem.Label() {
				label = ""
			} else {
				label += profile.ModuleSuffix(n.Elem)
			}
		}
		if label != "" {
			t.Labels = append(t.Labels, i, b.str(label))
		}
		t.Scope = append(t.Scope, sc)
		t.Kids = append(t.Kids, len(kids))
		b.push(t.Incl, n.Incl, n.EvIncl)
		b.push(t.Excl, n.Excl, n.EvExcl)
		for _, c := range kids {
			walk(c)
		}
	}
	walk(root)
	return t
}

type lineKey struct {
	file string
	line int
}

// lines counts each source line's samples in the calling-context tree:
// excl where the line is the sample's innermost scope, incl where it is
// anywhere on the path (a call site's line holds its callees' samples).
func (b *builder) lines(root *profile.Node) Lines {
	incl, excl := map[lineKey][]uint64{}, map[lineKey][]uint64{}
	add := func(m map[lineKey][]uint64, k lineKey, v []uint64) {
		if m[k] == nil {
			m[k] = make([]uint64, b.metrics)
		}
		for i, x := range v {
			m[k][i] += x
		}
	}
	var walk func(n *profile.Node)
	walk = func(n *profile.Node) {
		if v := b.values(n.Excl, n.EvExcl); nonZero(v) {
			if n.Elem != nil && n.Elem.Kind == profile.ElemStmt {
				add(excl, lineKey{n.Elem.File, n.Elem.Line}, v)
			}
			seen := map[lineKey]bool{}
			for a := n; a != nil && a.Elem != nil; a = a.Parent {
				if k := (lineKey{a.Elem.File, a.Elem.Line}); a.Elem.Kind == profile.ElemStmt && !seen[k] {
					seen[k] = true
					add(incl, k, v)
				}
			}
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	keys := make([]lineKey, 0, len(incl))
	for k := range incl {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].file != keys[j].file {
			return keys[i].file < keys[j].file
		}
		return keys[i].line < keys[j].line
	})
	l := Lines{File: []int{}, Line: []int{}, Incl: b.columns(), Excl: b.columns()}
	for _, k := range keys {
		l.File = append(l.File, b.str(k.file))
		l.Line = append(l.Line, k.line)
		for m := range l.Incl {
			l.Incl[m] = append(l.Incl[m], at(incl[k], m))
			l.Excl[m] = append(l.Excl[m], at(excl[k], m))
		}
	}
	return l
}

// values is one row's value of each column: the shown event's, then the
// others' (ev: every event's, by event index; nil with one event).
func (b *builder) values(shown uint64, ev []uint64) []uint64 {
	v := make([]uint64, 1, b.metrics)
	v[0] = shown
	for _, i := range b.others {
		v = append(v, at(ev, i))
	}
	return v
}

// push appends one row's values to columns.
func (b *builder) push(cols [][]uint64, shown uint64, ev []uint64) {
	for m, x := range b.values(shown, ev) {
		cols[m] = append(cols[m], x)
	}
}

func at(v []uint64, i int) uint64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}

func nonZero(v []uint64) bool {
	for _, x := range v {
		if x != 0 {
			return true
		}
	}
	return false
}
