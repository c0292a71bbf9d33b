package view

import (
	"io"
	"regexp"
	"sort"

	"bloop/diff"
)

// DiffData is what the diff page embeds: the procedures that differ
// between A and B (of two structure files, or of the pairs of two
// directories), both sides' trees of them, for each change the nodes it
// is about on each side, the names of the identical procedures, and the
// sources. Matching is the diff package's: the page only shows what its diff found.
type DiffData struct {
	Version int    `json:"version"`
	A       string `json:"a"`
	B       string `json:"b"`
	// Proc is the --proc expression the procedures were chosen by.
	Proc string `json:"proc,omitempty"`
	// Summary is the text report's last line (directories: summed over
	// the pairs), of all procedures whatever Proc.
	Summary diff.Summary `json:"summary"`
	// Totals: directories only, the pairs and files.
	Totals *DirCounts `json:"totals,omitempty"`
	// Pairs: two files make one pair (Path ""); two directories one per
	// pair that differs.
	Pairs   []DiffPair `json:"pairs"`
	OnlyInA []string   `json:"only_in_a"`
	OnlyInB []string   `json:"only_in_b"`
	// Errors: the files of two directories that could not be read.
	Errors  []string `json:"errors"`
	Strings []string `json:"strings"`
	// TreeA and TreeB: each side's procedures below a root node.
	TreeA STree  `json:"tree_a"`
	TreeB STree  `json:"tree_b"`
	Files []File `json:"files"`
}

// DirCounts are a directory diff's counts of pairs and files.
type DirCounts struct {
	Pairs       int `json:"pairs"`
	PairsDiffer int `json:"pairs_differ"`
	OnlyInA     int `json:"only_in_a"`
	OnlyInB     int `json:"only_in_b"`
	Errors      int `json:"errors"`
	Ignored     int `json:"ignored"`
}

// DiffPair is the diff of two structure files.
type DiffPair struct {
	Path    string       `json:"path"`
	Summary diff.Summary `json:"summary"`
	Procs   []DiffProc   `json:"procs"`
	// Same holds the identical procedures as pairs of strings: the link
	// name, the name when it says more (else 0).
	Same []int `json:"same"`
}

// DiffProc is a source function that differs (diff.ProcReport): its
// names and file (strings), its statuses, the names of its procedures
// on each side and the callers that hold it inlined (strings), its node
// in each tree (-1 where it is not), and its changes.
type DiffProc struct {
	Name    int          `json:"name"`
	Pretty  int          `json:"pretty,omitempty"`
	File    int          `json:"file"`
	Status  string       `json:"status"`
	Also    []string     `json:"also,omitempty"`
	NamesA  []int        `json:"names_a,omitempty"`
	NamesB  []int        `json:"names_b,omitempty"`
	Callers []int        `json:"callers,omitempty"`
	A       int          `json:"a"`
	B       int          `json:"b"`
	Changes []DiffChange `json:"changes"`
}

// DiffChange is one change, as diff.Change, with the nodes it is about
// in each tree.
type DiffChange struct {
	Kind          string   `json:"kind"`
	NowIn         []string `json:"now_in,omitempty"`
	Old           string   `json:"old,omitempty"`
	New           string   `json:"new,omitempty"`
	Count         int      `json:"count,omitempty"`
	NestedLoops   int      `json:"nested_loops,omitempty"`
	NestedInlines int      `json:"nested_inlined_calls,omitempty"`
	A             []int    `json:"a"`
	B             []int    `json:"b"`
}

// DiffOptions tune the diff page.
type DiffOptions struct {
	Sources Options
	// Proc, when set, keeps only the procedures whose link name or name
	// it matches (bloop diff --proc).
	Proc *regexp.Regexp
	// MaxScopes bounds both trees together (0: DefaultMaxScopes).
	MaxScopes int
}

// diffMaker builds a DiffData.
type diffMaker struct {
	o           DiffOptions
	d           *DiffData
	strs        *strTable
	a, b        *sideBuilder
	what        string // the page's subject, for ErrTooLarge
	errTooLarge error
}

func newDiffMaker(a, b string, o DiffOptions) *diffMaker {
	if o.MaxScopes == 0 {
		o.MaxScopes = DefaultMaxScopes
	}
	d := &DiffData{Version: 1, A: a, B: b, Pairs: []DiffPair{}, OnlyInA: []string{}, OnlyInB: []string{}, Errors: []string{},
		TreeA: newSTree(), TreeB: newSTree(), Files: []File{}}
	if o.Proc != nil {
		d.Proc = o.Proc.String()
	}
	m := &diffMaker{o: o, d: d, strs: newStrTable(), what: "the diff of " + a + " and " + b}
	m.a, m.b = newSideBuilder(&d.TreeA, m.strs), newSideBuilder(&d.TreeB, m.strs)
	m.a.node(SModule, a, a, 0, 0, 0)
	m.b.node(SModule, b, b, 0, 0, 0)
	return m
}

// DiffPage makes the diff page's data of two structure files, from the
// report diff.Diff made with DiffOptions.Detail. A page of more scopes
// than o.MaxScopes is an *ErrTooLarge.
func DiffPage(r *diff.Report, o DiffOptions) (*DiffData, error) {
	m := newDiffMaker(r.A, r.B, o)
	m.d.Summary = r.Summary
	m.pair("", r)
	return m.finish()
}

// DirDiffPage makes the diff page's data of two directories, from the
// report diff.DiffDirs made with DiffOptions.Detail: the pairs that
// differ, and the files only on one side.
func DirDiffPage(r *diff.DirReport, o DiffOptions) (*DiffData, error) {
	m := newDiffMaker(r.A, r.B, o)
	t := r.Totals
	m.d.Summary = t.Summary
	m.d.Totals = &DirCounts{Pairs: t.Pairs, PairsDiffer: t.PairsDiffer, OnlyInA: t.OnlyInA, OnlyInB: t.OnlyInB, Errors: t.Errors, Ignored: t.Ignored}
	m.d.OnlyInA = append(m.d.OnlyInA, r.OnlyInA...)
	m.d.OnlyInB = append(m.d.OnlyInB, r.OnlyInB...)
	for _, e := range r.Errors {
		m.d.Errors = append(m.d.Errors, e.Message)
	}
	for _, p := range r.Pairs {
		if !p.Equal {
			m.pair(p.Path, p.Report)
		}
	}
	return m.finish()
}

func (m *diffMaker) keep(p *diff.ProcReport) bool {
	re := m.o.Proc
	return re == nil || re.MatchString(p.Name) || p.Pretty != "" && re.MatchString(p.Pretty)
}

// pair adds the procedures of one report.
func (m *diffMaker) pair(path string, r *diff.Report) {
	dp := DiffPair{Path: path, Summary: r.Summary, Procs: []DiffProc{}, Same: []int{}}
	for i := range r.Procedures {
		p := &r.Procedures[i]
		if !m.keep(p) || m.errTooLarge != nil {
			continue
		}
		pp := DiffProc{Name: m.strs.str(p.Name), Pretty: m.strs.str(p.Pretty), File: m.strs.str(p.File), Status: p.Status, Also: p.Also,
			NamesA: m.strs.strs(p.NamesA), NamesB: m.strs.strs(p.NamesB), Callers: m.strs.strs(p.Callers), A: -1, B: -1, Changes: []DiffChange{}}
		if p.A != nil {
			pp.A = m.a.function(p.Name, p.A)
			m.d.TreeA.Kids[0]++
		}
		if p.B != nil {
			pp.B = m.b.function(p.Name, p.B)
			m.d.TreeB.Kids[0]++
		}
		for _, c := range p.Changes {
			pp.Changes = append(pp.Changes, DiffChange{Kind: c.Kind, NowIn: c.NowIn, Old: c.Old, New: c.New, Count: c.Count,
				NestedLoops: c.NestedLoops, NestedInlines: c.NestedInlines, A: m.a.refs(c.InA), B: m.b.refs(c.InB)})
		}
		dp.Procs = append(dp.Procs, pp)
		if n := len(m.d.TreeA.Kind) + len(m.d.TreeB.Kind); n > m.o.MaxScopes {
			m.errTooLarge = &ErrTooLarge{Module: m.what, Scopes: n, MaxScopes: m.o.MaxScopes}
		}
	}
	for i := range r.Same {
		if p := &r.Same[i]; m.keep(p) {
			dp.Same = append(dp.Same, m.strs.str(p.Name), m.strs.str(p.Pretty))
		}
	}
	m.d.Pairs = append(m.d.Pairs, dp)
}

func (m *diffMaker) finish() (*DiffData, error) {
	if m.errTooLarge != nil {
		return nil, m.errTooLarge
	}
	m.d.Strings = m.strs.list
	m.addSources()
	return m.d, nil
}

// addSources embeds the files of A's scopes, then those of B's that A's
// do not name (two builds of one tree name the same paths), each in path
// order, at most maxStructSources in all.
func (m *diffMaker) addSources() {
	seen := map[int]bool{}
	var paths []string
	for _, t := range []*STree{&m.d.TreeA, &m.d.TreeB} {
		var side []string
		add := func(f int) {
			if p := m.strs.list[f]; !seen[f] && p != "" && p != "<unknown>" {
				seen[f] = true
				side = append(side, p)
			}
		}
		for i, k := range t.Kind {
			if k != SModule {
				add(t.File[i])
			}
		}
		for k := 0; k+2 < len(t.Calls); k += 3 {
			add(t.Calls[k+1])
		}
		sort.Strings(side)
		paths = append(paths, side...)
	}
	m.d.Files = append(m.d.Files, embedSources(m.o.Sources, m.strs, paths)...)
}

// WriteDiff writes the diff page.
func WriteDiff(w io.Writer, d *DiffData) error {
	title := "bloop diff: " + d.A + " " + d.B
	return writePage(w, "page-diff", title, d, "common.js", "srctable.js", "diff.js")
}
