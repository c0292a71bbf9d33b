package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"bloop/dyninst"
	"bloop/loader"
	"bloop/pipeline"
	"bloop/source"
	"bloop/structure"
)

// SourceLoops returns the header lines of the loops written in a source
// file: from clang's AST (`-Xclang -ast-dump=json`) for C and C++, from DO
// statements for Fortran. Loops in included headers are not counted.
func SourceLoops(src string) ([]int, error) {
	switch strings.ToLower(filepath.Ext(src)) {
	case ".f", ".f90", ".f95", ".f03", ".f08":
		return fortranLoops(src)
	case ".c", ".cc", ".cpp", ".cxx", ".c++":
		return clangLoops(src)
	}
	return nil, fmt.Errorf("%s: unknown source language", src)
}

func fortranLoops(src string) ([]int, error) {
	f, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return source.FortranLoops(f)
}

// clangBinary finds a clang to dump ASTs with.
func clangBinary() (string, error) {
	for _, c := range []string{"clang", "clang-14", "clang-15", "clang-16", "clang-17", "clang-18"} {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("clang not found (needed for C/C++ source loops)")
}

type astNode struct {
	Kind  string     `json:"kind"`
	Loc   astLoc     `json:"loc"`
	Range astRange   `json:"range"`
	Inner []*astNode `json:"inner"`
}

type astLoc struct {
	File         string `json:"file"`
	Line         int    `json:"line"`
	IncludedFrom *struct {
		File string `json:"file"`
	} `json:"includedFrom"`
	ExpansionLoc *astLoc `json:"expansionLoc"`
}

type astRange struct {
	Begin astLoc `json:"begin"`
	End   astLoc `json:"end"`
}

func clangLoops(src string) ([]int, error) {
	cc, err := clangBinary()
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(src); err == nil {
		src = abs
	}
	args := []string{"-fsyntax-only", "-Xclang", "-ast-dump=json", src}
	if ext := filepath.Ext(src); ext != ".c" {
		args = append([]string{"-x", "c++", "-std=c++17"}, args...)
	}
	cmd := exec.Command(cc, args...)
	cmd.Dir = filepath.Dir(src)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %s %v: %v", src, cc, args, err)
	}
	var root astNode
	if err := json.Unmarshal(out, &root); err != nil {
		return nil, fmt.Errorf("%s: clang's AST: %v", src, err)
	}
	// clang names a location's file only when it changes, in document order.
	cur := ""
	seen := map[int]bool{}
	var lines []int
	track := func(l astLoc) {
		if l.ExpansionLoc != nil {
			l = *l.ExpansionLoc
		}
		if l.File != "" {
			cur = l.File
		}
	}
	var walk func(n *astNode)
	walk = func(n *astNode) {
		track(n.Loc)
		track(n.Range.Begin)
		switch n.Kind {
		case "ForStmt", "WhileStmt", "DoStmt", "CXXForRangeStmt":
			b := n.Range.Begin
			if b.ExpansionLoc != nil {
				b = *b.ExpansionLoc
			}
			if filepath.Base(cur) == filepath.Base(src) && b.Line > 0 && !seen[b.Line] {
				seen[b.Line] = true
				lines = append(lines, b.Line)
			}
		}
		for _, c := range n.Inner {
			walk(c)
		}
		track(n.Range.End)
	}
	walk(&root)
	sort.Ints(lines)
	return lines, nil
}

// Mode is a way of running bloop, for the source comparison.
type Mode struct {
	Name string
	Opt  pipeline.Options
}

// Modes are the placement modes compared against source loops.
func Modes() []Mode {
	return []Mode{
		{"hpcstruct", pipeline.Options{Dyninst: dyninst.Hpcstruct}},
		{"dwarf", pipeline.Options{Engine: pipeline.DWARF}},
		{"hybrid", pipeline.Options{Engine: pipeline.Hybrid}},
		{"heuristic", pipeline.Options{Engine: pipeline.Heuristic}},
	}
}

// LoopLines is how one mode's loops of a source file compare with the
// loops written in it.
type LoopLines struct {
	Mode          string
	Source        int // loops in the source
	Found         int // of those, with an L on their line
	Loops         int // distinct L lines in that file
	OnSourceLines int // of those, on a source loop's line
}

// Recall is the share of source loops found on their line.
func (l *LoopLines) Recall() float64 { return ratio(uint64(l.Found), uint64(l.Source)) }

// Precision is the share of L lines that are source loop lines.
func (l *LoopLines) Precision() float64 { return ratio(uint64(l.OnSourceLines), uint64(l.Loops)) }

// SourceEval compares every mode's loop header lines in bin with the loops
// of src.
func SourceEval(src, bin string, workers int) ([]*LoopLines, error) {
	want, err := SourceLoops(src)
	if err != nil {
		return nil, err
	}
	return LoopLinesOf(src, want, bin, Modes(), workers)
}

// LoopLinesOf compares the loop header lines the given modes write for bin
// with want, the loop lines of src.
func LoopLinesOf(src string, want []int, bin string, modes []Mode, workers int) ([]*LoopLines, error) {
	img, err := loader.Open(bin, loader.Options{})
	if err != nil {
		return nil, err
	}
	isLoop := map[int]bool{}
	for _, l := range want {
		isLoop[l] = true
	}
	var out []*LoopLines
	for _, m := range modes {
		opt := m.Opt
		opt.Workers = workers
		opt.SourceDirs = []string{filepath.Dir(src)}
		mod, _ := pipeline.Analyze(img, opt)
		got := map[int]bool{}
		for _, f := range mod.Files {
			for _, p := range f.Procs {
				structure.Walk(p, func(s *structure.Scope) {
					if s.Kind == structure.Loop && filepath.Base(s.File) == filepath.Base(src) {
						got[s.Line] = true
					}
				})
			}
		}
		r := &LoopLines{Mode: m.Name, Source: len(want), Loops: len(got)}
		for _, l := range want {
			if got[l] {
				r.Found++
			}
		}
		for l := range got {
			if isLoop[l] {
				r.OnSourceLines++
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// WriteSource prints a source comparison.
func WriteSource(w io.Writer, src, bin string, rs []*LoopLines) {
	n := 0
	if len(rs) > 0 {
		n = rs[0].Source
	}
	fmt.Fprintf(w, "%s vs %s: %d source loops\n", filepath.Base(bin), filepath.Base(src), n)
	fmt.Fprintf(w, "  %-10s %6s %9s %9s\n", "mode", "found", "recall", "precision")
	for _, r := range rs {
		fmt.Fprintf(w, "  %-10s %3d/%-3d %8.1f%% %8.1f%%\n", r.Mode, r.Found, r.Source, 100*r.Recall(), 100*r.Precision())
	}
}
