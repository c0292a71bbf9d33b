package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"bloop/structure"
)

// Report is the result of Diff. Procedures holds only procedures that
// differ, sorted by file, name and status; changes are sorted by kind,
// then path.
type Report struct {
	Version    int          `json:"version"` // ReportVersion
	A          string       `json:"a"`
	B          string       `json:"b"`
	Options    DiffOptions  `json:"options"`
	Summary    Summary      `json:"summary"`
	Procedures []ProcReport `json:"procedures"`
	// Warnings: canonicalization problems (elements without addresses).
	Warnings []string `json:"warnings"`
	// Same (with DiffOptions.Detail): the procedures on both sides that
	// do not differ, sorted as Procedures, status ProcSame.
	Same []ProcReport `json:"-"`
}

// ReportVersion is the version of the JSON reports (Report and
// DirReport), whose schema is schema/diff-v2.json. Version 2 pairs
// procedures by source function and adds its statuses and fields to
// version 1's, whose meaning is unchanged.
const ReportVersion = 2

// ProcReport lists the changes of one source function: the procedures
// its code is in on each side (its clones and outlined parts are one
// function), what the compilers decided differently about it (Status,
// Also), and the changes inside its paired bodies.
type ProcReport struct {
	// Name: the link name (ln, else n) of its procedure when that is the
	// same on both sides, else of the function they were made from.
	Name   string `json:"name"`
	Pretty string `json:"pretty,omitempty"` // n, when it differs from Name
	File   string `json:"file"`             // F basename
	// Status: what happened to the function, the first that holds of
	// added, removed, inlined, outlined, folded, unfolded, stub-added,
	// stub-removed, renamed, cloned, split, joined, changed.
	Status string `json:"status"`
	// Also: the other statuses of renamed..joined that hold.
	Also []string `json:"also,omitempty"`
	// NamesA and NamesB: the link names of the function's procedures on
	// each side, sorted, when they are not just Name.
	NamesA []string `json:"names_a,omitempty"`
	NamesB []string `json:"names_b,omitempty"`
	// Callers: for inlined, the functions of b that hold inlined copies
	// of it; for outlined, those of a that did; for folded (unfolded),
	// the function of b (a) whose code it is.
	Callers []string `json:"callers,omitempty"`
	Changes []Change `json:"changes"`
	// A and B (with DiffOptions.Detail): the function's canonical P
	// elements on each side, with the paths of their files as the F
	// elements name them, directories kept; none on a side it is not on.
	A, B []ProcNode `json:"-"`
}

// ProcNode is a procedure's canonical P element and the path of its file.
type ProcNode struct {
	Node *structure.Node
	Path string
}

// Procedure statuses.
const (
	ProcAdded   = "added"
	ProcRemoved = "removed"
	ProcChanged = "changed"
	// ProcInlined: out of line in a; in b only inlined copies (Callers).
	ProcInlined = "inlined"
	// ProcOutlined: only inlined copies in a (Callers); out of line in b.
	ProcOutlined = "outlined"
	// ProcFolded: out of line in a; in b its code is another function's
	// (Callers), which identical code folding kept; ProcUnfolded: the
	// reverse.
	ProcFolded   = "folded"
	ProcUnfolded = "unfolded"
	// ProcStubAdded and ProcStubRemoved: a PLT stub (f@plt) on one side:
	// calls to f go through the PLT in one build only.
	ProcStubAdded   = "stub-added"
	ProcStubRemoved = "stub-removed"
	// ProcRenamed: copies of the function differ in clone suffixes
	// (f against f.constprop.0, f.isra.0 against f.constprop.0.isra.0).
	ProcRenamed = "renamed"
	// ProcCloned: one side has more copies of the function
	// (f against f and f.constprop.0).
	ProcCloned = "cloned"
	// ProcSplit: b has parts outlined from the body that a has not
	// (f.part.0, f.cold); ProcJoined: the reverse.
	ProcSplit  = "split"
	ProcJoined = "joined"
	// ProcSame is the status of Report.Same's procedures, which the JSON
	// report does not list.
	ProcSame = "same"
)

// Statuses lists the procedure statuses in the order they are listed.
var Statuses = []string{ProcChanged, ProcRenamed, ProcCloned, ProcSplit, ProcJoined, ProcInlined, ProcOutlined,
	ProcFolded, ProcUnfolded, ProcRemoved, ProcAdded, ProcStubRemoved, ProcStubAdded}

// Summary counts the changes of a Report.
type Summary struct {
	ProcsDiffer  int `json:"procedures_differ"`
	ProcsAdded   int `json:"procedures_added"`
	ProcsRemoved int `json:"procedures_removed"`
	// Function-level decisions (version 2): see the statuses.
	ProcsInlined   int `json:"functions_inlined"`
	ProcsOutlined  int `json:"functions_outlined"`
	ProcsFolded    int `json:"functions_folded"`
	ProcsUnfolded  int `json:"functions_unfolded"`
	ProcsRenamed   int `json:"functions_renamed"`
	ProcsCloned    int `json:"functions_cloned"`
	ProcsSplit     int `json:"functions_split"`
	ProcsJoined    int `json:"functions_joined"`
	StubsAdded     int `json:"stubs_added"`
	StubsRemoved   int `json:"stubs_removed"`
	LoopsAdded     int `json:"loops_added"`
	LoopsRemoved   int `json:"loops_removed"`
	LoopsMoved     int `json:"loops_moved"`
	LoopsSplit     int `json:"loops_split"`
	LoopsFused     int `json:"loops_fused"`
	InlinesAdded   int `json:"inlined_calls_added"`
	InlinesRemoved int `json:"inlined_calls_removed"`
	InlinesMoved   int `json:"inlined_calls_moved"`
	StmtsIntoLoop  int `json:"statements_into_loops"`
	StmtsOutOfLoop int `json:"statements_out_of_loops"`
	Addresses      int `json:"address_differences"`
}

// add adds o's counts to s.
func (s *Summary) add(o Summary) {
	s.ProcsDiffer += o.ProcsDiffer
	s.ProcsAdded += o.ProcsAdded
	s.ProcsRemoved += o.ProcsRemoved
	s.ProcsInlined += o.ProcsInlined
	s.ProcsOutlined += o.ProcsOutlined
	s.ProcsFolded += o.ProcsFolded
	s.ProcsUnfolded += o.ProcsUnfolded
	s.ProcsRenamed += o.ProcsRenamed
	s.ProcsCloned += o.ProcsCloned
	s.ProcsSplit += o.ProcsSplit
	s.ProcsJoined += o.ProcsJoined
	s.StubsAdded += o.StubsAdded
	s.StubsRemoved += o.StubsRemoved
	s.LoopsAdded += o.LoopsAdded
	s.LoopsRemoved += o.LoopsRemoved
	s.LoopsMoved += o.LoopsMoved
	s.LoopsSplit += o.LoopsSplit
	s.LoopsFused += o.LoopsFused
	s.InlinesAdded += o.InlinesAdded
	s.InlinesRemoved += o.InlinesRemoved
	s.InlinesMoved += o.InlinesMoved
	s.StmtsIntoLoop += o.StmtsIntoLoop
	s.StmtsOutOfLoop += o.StmtsOutOfLoop
	s.Addresses += o.Addresses
}

// StmtsMoved is the number of lines that moved into or out of loops.
func (s Summary) StmtsMoved() int { return s.StmtsIntoLoop + s.StmtsOutOfLoop }

func (r *Report) summarize() {
	s := Summary{ProcsDiffer: len(r.Procedures)}
	for _, p := range r.Procedures {
		for _, st := range append([]string{p.Status}, p.Also...) {
			switch st {
			case ProcAdded:
				s.ProcsAdded++
			case ProcRemoved:
				s.ProcsRemoved++
			case ProcInlined:
				s.ProcsInlined++
			case ProcOutlined:
				s.ProcsOutlined++
			case ProcFolded:
				s.ProcsFolded++
			case ProcUnfolded:
				s.ProcsUnfolded++
			case ProcRenamed:
				s.ProcsRenamed++
			case ProcCloned:
				s.ProcsCloned++
			case ProcSplit:
				s.ProcsSplit++
			case ProcJoined:
				s.ProcsJoined++
			case ProcStubAdded:
				s.StubsAdded++
			case ProcStubRemoved:
				s.StubsRemoved++
			}
		}
		for _, c := range p.Changes {
			switch c.Kind {
			case LoopAdded, InlineAdded:
				s.LoopsAdded += c.NestedLoops
				s.InlinesAdded += c.NestedInlines
			case LoopRemoved, InlineRemoved:
				s.LoopsRemoved += c.NestedLoops
				s.InlinesRemoved += c.NestedInlines
			}
			switch c.Kind {
			case LoopAdded:
				s.LoopsAdded++
			case LoopRemoved:
				s.LoopsRemoved++
			case LoopMoved:
				s.LoopsMoved++
			case LoopSplit:
				s.LoopsSplit++
			case LoopFused:
				s.LoopsFused++
			case InlineAdded:
				s.InlinesAdded++
			case InlineRemoved:
				s.InlinesRemoved++
			case InlineMoved:
				s.InlinesMoved++
			case StmtIntoLoop:
				s.StmtsIntoLoop++
			case StmtOutOfLoop:
				s.StmtsOutOfLoop++
			case AddressChanged:
				s.Addresses++
			}
		}
	}
	r.Summary = s
}

// Equal reports whether no procedure differs.
func (r *Report) Equal() bool { return len(r.Procedures) == 0 }

// String is the one-line summary.
func (s Summary) String() string {
	out := fmt.Sprintf("%d procedures differ: %d added, %d removed; loops +%d -%d moved %d split %d fused %d; inlined calls +%d -%d moved %d; statements moved %d (%d into loops, %d out of loops)",
		s.ProcsDiffer, s.ProcsAdded, s.ProcsRemoved,
		s.LoopsAdded, s.LoopsRemoved, s.LoopsMoved, s.LoopsSplit, s.LoopsFused,
		s.InlinesAdded, s.InlinesRemoved, s.InlinesMoved,
		s.StmtsMoved(), s.StmtsIntoLoop, s.StmtsOutOfLoop)
	if s.Addresses > 0 {
		out += fmt.Sprintf("; addresses %d", s.Addresses)
	}
	if f := s.functionsText(); f != "" {
		out += "; functions " + f
	}
	return out
}

// functionsText counts the function-level decisions, "" when there are
// none (the summary of two builds of one compiler stays as it was).
func (s Summary) functionsText() string {
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{s.ProcsRenamed, "renamed"}, {s.ProcsCloned, "cloned"}, {s.ProcsSplit, "split"}, {s.ProcsJoined, "joined"},
		{s.ProcsInlined, "inlined"}, {s.ProcsOutlined, "outlined"}, {s.ProcsFolded, "folded"}, {s.ProcsUnfolded, "unfolded"}, {s.StubsAdded, "PLT stubs added"}, {s.StubsRemoved, "PLT stubs removed"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return strings.Join(parts, ", ")
}

var kindText = map[string]string{
	LoopRemoved:    "loop removed",
	LoopAdded:      "loop added",
	LoopMoved:      "loop moved",
	LoopSplit:      "loop split",
	LoopFused:      "loops fused",
	InlineRemoved:  "inlined call removed",
	InlineAdded:    "inlined call added",
	InlineMoved:    "inlined call moved",
	StmtIntoLoop:   "line into loop",
	StmtOutOfLoop:  "line out of loop",
	AddressChanged: "address",
}

// WriteText writes the report for people: a header, one section per
// procedure, and the one-line summary.
func (r *Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("--- a: %s\n+++ b: %s\n", r.A, r.B)
	for _, warn := range r.Warnings {
		ew.printf("warning: %s\n", warn)
	}
	for _, p := range r.Procedures {
		file := p.File
		if file == "" {
			file = "no file"
		}
		name := p.Name
		if p.Pretty != "" {
			name += " = " + p.Pretty
		}
		ew.printf("\nprocedure %s (%s): %s\n", name, file, strings.Join(append([]string{p.Status}, p.Also...), ", "))
		if p.NamesA != nil || p.NamesB != nil {
			ew.printf("  %-22s a: %s  b: %s\n", "procedures", namesText(p.NamesA, p.Name, p.Status), namesText(p.NamesB, p.Name, p.Status))
		}
		if len(p.Callers) > 0 {
			what, side := "inlined into", "b"
			switch p.Status {
			case ProcOutlined:
				side = "a"
			case ProcFolded:
				what = "folded into"
			case ProcUnfolded:
				what, side = "folded into", "a"
			}
			ew.printf("  %-22s %s: %s\n", what, side, strings.Join(p.Callers, ", "))
		}
		for _, c := range p.Changes {
			ew.printf("  %-22s %s", kindText[c.Kind], displayPath(c.Path))
			switch c.Kind {
			case LoopMoved:
				ew.printf(": line %s -> %s", c.Old, c.New)
			case InlineMoved:
				ew.printf(": call site %s -> %s", c.Old, c.New)
			case LoopSplit, LoopFused:
				ew.printf(": %s", splitText(c))
			case AddressChanged:
				ew.printf(": %s -> %s", c.Old, c.New)
			}
			if c.Kind == LoopRemoved && c.NowIn != nil {
				if len(c.NowIn) == 0 {
					ew.printf(": its lines are not in b")
				} else {
					ew.printf(": its lines now in %s", strings.Join(mapSlice(c.NowIn, displayPath), ", "))
				}
			}
			if c.NestedLoops+c.NestedInlines > 0 {
				ew.printf(" (with %d nested loops, %d nested inlined calls)", c.NestedLoops, c.NestedInlines)
			}
			ew.printf("\n")
		}
	}
	ew.printf("\n%s\n", r.Summary)
	return ew.err
}

// splitText says how many loops became how many.
func splitText(c Change) string {
	switch {
	case c.Old != "":
		return c.Old + " loops into " + c.New
	case c.Kind == LoopSplit:
		return fmt.Sprintf("into %d loops", c.Count)
	}
	return fmt.Sprintf("%d loops into one", c.Count)
}

// namesText is one side's procedure names for the text report.
func namesText(names []string, name, status string) string {
	switch {
	case names == nil && (status == ProcAdded || status == ProcRemoved || status == ProcInlined || status == ProcOutlined ||
		status == ProcFolded || status == ProcUnfolded):
		return "(none)"
	case names == nil:
		return name
	}
	return strings.Join(names, ", ")
}

func mapSlice(xs []string, f func(string) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func displayPath(p string) string {
	if p == "" {
		return "(procedure)"
	}
	return p
}

// WriteJSON writes the report as indented JSON (field names are the json
// tags of Report; order is the report's, hence deterministic).
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func joinPath(prefix, elem string) string {
	if prefix == "" {
		return elem
	}
	return prefix + "/" + elem
}
