package diff

import (
	"encoding/json"
	"fmt"
	"io"

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
// DirReport), whose schema is schema/diff-v1.json.
const ReportVersion = 1

// ProcReport lists the changes of one procedure.
type ProcReport struct {
	Name    string   `json:"name"`             // link name (ln, else n)
	Pretty  string   `json:"pretty,omitempty"` // n, when it differs from Name
	File    string   `json:"file"`             // F basename
	Status  string   `json:"status"`
	Changes []Change `json:"changes"`
	// A and B (with DiffOptions.Detail): the procedure's canonical P
	// element on each side, nil on the side it is not on; PathA and PathB
	// name its file as the F element does, directories kept.
	A, B         *structure.Node `json:"-"`
	PathA, PathB string          `json:"-"`
}

// Procedure statuses.
const (
	ProcAdded   = "added"
	ProcRemoved = "removed"
	ProcChanged = "changed"
	// ProcSame is the status of Report.Same's procedures, which the JSON
	// report does not list.
	ProcSame = "same"
)

// Summary counts the changes of a Report.
type Summary struct {
	ProcsDiffer    int `json:"procedures_differ"`
	ProcsAdded     int `json:"procedures_added"`
	ProcsRemoved   int `json:"procedures_removed"`
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
		switch p.Status {
		case ProcAdded:
			s.ProcsAdded++
		case ProcRemoved:
			s.ProcsRemoved++
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
	return out
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
		ew.printf("\nprocedure %s (%s): %s\n", name, file, p.Status)
		for _, c := range p.Changes {
			ew.printf("  %-22s %s", kindText[c.Kind], displayPath(c.Path))
			switch c.Kind {
			case LoopMoved:
				ew.printf(": line %s -> %s", c.Old, c.New)
			case InlineMoved:
				ew.printf(": call site %s -> %s", c.Old, c.New)
			case LoopSplit:
				ew.printf(": into %d loops", c.Count)
			case LoopFused:
				ew.printf(": %d loops into one", c.Count)
			case AddressChanged:
				ew.printf(": %s -> %s", c.Old, c.New)
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
