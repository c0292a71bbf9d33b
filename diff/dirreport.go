package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Counts lists the nonzero counts of s in words, in a fixed order
// (procedures, functions' statuses, loops, inlined calls, lines,
// addresses), e.g. "3 procedures
// added, 1 loop removed, 2 inlined calls moved"; "" when all are zero.
func (s Summary) Counts() string {
	var out []string
	add := func(n int, one, many string) {
		if n > 0 {
			out = append(out, plural(n, one, many))
		}
	}
	add(s.ProcsAdded, "procedure added", "procedures added")
	add(s.ProcsRemoved, "procedure removed", "procedures removed")
	add(s.ProcsDiffer-s.ProcsAdded-s.ProcsRemoved, "procedure changed", "procedures changed")
	add(s.ProcsRenamed, "function renamed", "functions renamed")
	add(s.ProcsCloned, "function cloned", "functions cloned")
	add(s.ProcsSplit, "function split", "functions split")
	add(s.ProcsJoined, "function joined", "functions joined")
	add(s.ProcsInlined, "function inlined", "functions inlined")
	add(s.ProcsOutlined, "function outlined", "functions outlined")
	add(s.ProcsFolded, "function folded", "functions folded")
	add(s.ProcsUnfolded, "function unfolded", "functions unfolded")
	add(s.StubsAdded, "PLT stub added", "PLT stubs added")
	add(s.StubsRemoved, "PLT stub removed", "PLT stubs removed")
	add(s.LoopsAdded, "loop added", "loops added")
	add(s.LoopsRemoved, "loop removed", "loops removed")
	add(s.LoopsMoved, "loop moved", "loops moved")
	add(s.LoopsSplit, "loop split", "loops split")
	add(s.LoopsFused, "loop fusion", "loop fusions")
	add(s.InlinesAdded, "inlined call added", "inlined calls added")
	add(s.InlinesRemoved, "inlined call removed", "inlined calls removed")
	add(s.InlinesMoved, "inlined call moved", "inlined calls moved")
	add(s.StmtsIntoLoop, "line into loops", "lines into loops")
	add(s.StmtsOutOfLoop, "line out of loops", "lines out of loops")
	add(s.Addresses, "address changed", "addresses changed")
	return strings.Join(out, ", ")
}

// String is the totals line: the pairs and files, then the summed
// summary in the words a single pair's report ends with.
func (t DirTotals) String() string {
	return fmt.Sprintf("totals: %s compared, %d differ, %d only in a, %d only in b, %s, %s ignored; %s",
		plural(t.Pairs, "pair", "pairs"), t.PairsDiffer, t.OnlyInA, t.OnlyInB,
		plural(t.Errors, "error", "errors"), plural(t.Ignored, "other file", "other files"),
		t.Summary.String())
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// WriteText writes the report for people: the operands, then in order of
// relative path one line per pair that differs (its Counts), per file
// only in a or only in b, and each pair's warnings; then the totals.
// Errors are not written here: the caller says them where errors go.
func (r *DirReport) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	ew.printf("--- a: %s\n+++ b: %s\n", r.A, r.B)
	type entry struct{ path, text string }
	var es []entry
	for _, p := range r.Pairs {
		var lines []string
		if !p.Equal {
			lines = append(lines, p.Path+": "+p.Report.Summary.Counts())
		}
		for _, warn := range p.Report.Warnings {
			lines = append(lines, "warning: "+warn)
		}
		if len(lines) > 0 {
			es = append(es, entry{p.Path, strings.Join(lines, "\n")})
		}
	}
	for _, p := range r.OnlyInA {
		es = append(es, entry{p, "only in a: " + p})
	}
	for _, p := range r.OnlyInB {
		es = append(es, entry{p, "only in b: " + p})
	}
	slices.SortStableFunc(es, func(x, y entry) int { return strings.Compare(x.path, y.path) })
	for _, e := range es {
		ew.printf("%s\n", e.text)
	}
	ew.printf("\n%s\n", r.Totals)
	return ew.err
}

// WriteJSON writes the report as indented JSON; each pair's "report" is
// what WriteJSON of a single pair's Report writes.
func (r *DirReport) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
