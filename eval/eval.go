// Package eval measures the thesis engine against the truth that DWARF
// inline records give: which bytes are inlined (alien), from which file,
// and where loops sit.
package eval

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"

	"bloop/loader"
	"bloop/normalize"
	"bloop/pipeline"
	"bloop/structure"
)

// Result holds one binary's (or a total's) counts.
type Result struct {
	Name string
	// Bytes of code in statements: inlined per DWARF (truth), placed in an
	// alien context by the heuristic engine (pred), and both.
	TruthAlien, PredAlien, BothAlien uint64
	// Of BothAlien, bytes whose alien file is the inlined callee's file.
	RightFile uint64
	// Loops matched by entry address; those in the right context (native,
	// or inlined from the same file) and with the same header line.
	Loops, LoopsMatched, LoopsRightContext, LoopsSameLine int
	// Misses describes each loop placed in the wrong context.
	Misses []Miss
}

// Miss is a loop the thesis engine placed in a different context than
// DWARF's inline records.
type Miss struct {
	Entry       uint64
	Proc        string // the truth's enclosing procedure
	Truth, Pred string // "native" or "inlined from FILE", with the header line
}

// Precision of alien detection.
func (r *Result) Precision() float64 { return ratio(r.BothAlien, r.PredAlien) }

// Recall of alien detection.
func (r *Result) Recall() float64 { return ratio(r.BothAlien, r.TruthAlien) }

// FileShare is the share of inlined bytes attributed to the right file.
func (r *Result) FileShare() float64 { return ratio(r.RightFile, r.TruthAlien) }

// LoopContext is the share of loops in the right context.
func (r *Result) LoopContext() float64 { return ratio(uint64(r.LoopsRightContext), uint64(r.Loops)) }

// LoopLine is the share of loops with the same header line.
func (r *Result) LoopLine() float64 { return ratio(uint64(r.LoopsSameLine), uint64(r.Loops)) }

func ratio(a, b uint64) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

// Add accumulates o into r.
func (r *Result) Add(o *Result) {
	r.TruthAlien += o.TruthAlien
	r.PredAlien += o.PredAlien
	r.BothAlien += o.BothAlien
	r.RightFile += o.RightFile
	r.Loops += o.Loops
	r.LoopsMatched += o.LoopsMatched
	r.LoopsRightContext += o.LoopsRightContext
	r.LoopsSameLine += o.LoopsSameLine
	r.Misses = append(r.Misses, o.Misses...)
}

// Binary evaluates the heuristic engine on one binary with inline records.
func Binary(path string, workers int) (*Result, error) {
	img, err := loader.Open(path, loader.Options{})
	if err != nil {
		return nil, err
	}
	if !img.HasInlineInfo() {
		return nil, fmt.Errorf("%s: no DWARF inline records to compare with", path)
	}
	truth, _ := pipeline.Analyze(img, pipeline.Options{Workers: workers, Engine: pipeline.DWARF})
	all := normalize.All
	pred, _ := pipeline.Analyze(img, pipeline.Options{Workers: workers, Engine: pipeline.Heuristic, Normalize: &all})
	r := &Result{Name: filepath.Base(path)}
	tb, tl := collect(truth)
	pb, pl := collect(pred)
	for _, b := range tb {
		chain := inlineChain(img, b.lo)
		if len(chain) > 0 {
			r.TruthAlien += b.hi - b.lo
		}
		// predicted contexts for the same bytes
		for _, p := range overlapping(pb, b) {
			n := min(b.hi, p.hi) - max(b.lo, p.lo)
			if p.alien {
				r.PredAlien += n
				if len(chain) > 0 {
					r.BothAlien += n
					if filepath.Base(p.file) == filepath.Base(calleeFile(chain)) {
						r.RightFile += n
					}
				}
			}
		}
	}
	// A loop of the truth matches the predicted loop with the same entry
	// address or else the innermost predicted loop that holds its entry
	// byte: normalization may have fused loop versions, which keeps one
	// entry address for several.
	byEntry := map[uint64]*loopInfo{}
	for i := range pl {
		byEntry[pl[i].entry] = &pl[i]
	}
	for _, l := range tl {
		r.Loops++
		p := byEntry[l.entry]
		if p == nil {
			p = innermostLoop(pb, l.entry)
		}
		if p == nil {
			r.Misses = append(r.Misses, Miss{l.entry, l.proc, l.describe(), "no loop"})
			continue
		}
		r.LoopsMatched++
		if l.alien == p.alien && (!l.alien || filepath.Base(l.file) == filepath.Base(p.file)) {
			r.LoopsRightContext++
		} else {
			r.Misses = append(r.Misses, Miss{l.entry, l.proc, l.describe(), p.describe()})
		}
		if l.line == p.line {
			r.LoopsSameLine++
		}
	}
	return r, nil
}

func inlineChain(img *loader.Image, a uint64) []*loader.Inline {
	sp := img.SubprogramAt(a)
	if sp == nil {
		return nil
	}
	return sp.InlineChain(a, nil)
}

// calleeFile is the declaring file of the innermost inlined callee.
func calleeFile(chain []*loader.Inline) string {
	return chain[len(chain)-1].DeclFile
}

type byteCtx struct {
	lo, hi uint64
	alien  bool
	file   string    // the alien context's file
	loop   *loopInfo // innermost enclosing loop, or nil
}

type loopInfo struct {
	entry uint64
	line  int
	alien bool
	file  string // the context's file when alien
	proc  string
}

func (l *loopInfo) describe() string {
	if l.alien {
		return fmt.Sprintf("inlined from %s, line %d", filepath.Base(l.file), l.line)
	}
	return fmt.Sprintf("native, line %d", l.line)
}

// collect lists every statement range with its context, and every loop.
func collect(m *structure.Module) ([]byteCtx, []loopInfo) {
	var bs []byteCtx
	var ls []loopInfo
	var proc string
	var walk func(s *structure.Scope, alien bool, file string, loop *loopInfo)
	walk = func(s *structure.Scope, alien bool, file string, loop *loopInfo) {
		for _, c := range s.Children {
			switch c.Role() {
			case structure.RoleStmt:
				for _, r := range c.Ranges {
					bs = append(bs, byteCtx{r.Lo, r.Hi, alien, file, loop})
				}
			case structure.RoleLoop:
				li := &loopInfo{c.Entry, c.Line, alien, file, proc}
				ls = append(ls, *li)
				walk(c, alien, file, li)
			case structure.RoleInlined:
				walk(c, true, c.File, loop)
			default: // call sites and guards keep the context
				walk(c, alien, file, loop)
			}
		}
	}
	for _, f := range m.Files {
		for _, p := range f.Procs {
			proc = p.Name
			walk(p, false, "", nil)
		}
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].lo < bs[j].lo })
	// Each byte counts once: like hpcstruct, both engines show a .cold
	// part within its parent procedure and also as a procedure of its own.
	out := bs[:0]
	var end uint64
	for _, b := range bs {
		b.lo = max(b.lo, end)
		if b.lo < b.hi {
			out = append(out, b)
			end = b.hi
		}
	}
	return out, ls
}

// innermostLoop is the loop of the code at addr, or nil.
func innermostLoop(bs []byteCtx, addr uint64) *loopInfo {
	for _, b := range overlapping(bs, byteCtx{lo: addr, hi: addr + 1}) {
		if b.loop != nil {
			return b.loop
		}
	}
	return nil
}

func overlapping(bs []byteCtx, b byteCtx) []byteCtx {
	i := sort.Search(len(bs), func(i int) bool { return bs[i].hi > b.lo })
	var out []byteCtx
	for ; i < len(bs) && bs[i].lo < b.hi; i++ {
		out = append(out, bs[i])
	}
	return out
}

// Write prints results and their total as a table.
func Write(w io.Writer, rs []*Result) {
	fmt.Fprintf(w, "%-28s %9s %9s %9s %8s %9s %9s\n", "binary", "precision", "recall", "file", "loops", "context", "line")
	total := &Result{Name: "total"}
	row := func(r *Result) {
		fmt.Fprintf(w, "%-28s %8.1f%% %8.1f%% %8.1f%% %8d %8.1f%% %8.1f%%\n", r.Name,
			100*r.Precision(), 100*r.Recall(), 100*r.FileShare(), r.Loops, 100*r.LoopContext(), 100*r.LoopLine())
	}
	for _, r := range rs {
		row(r)
		total.Add(r)
	}
	if len(rs) > 1 {
		row(total)
	}
}

// WriteMisses lists the loops placed in the wrong context, per binary.
func WriteMisses(w io.Writer, rs []*Result) {
	for _, r := range rs {
		for _, m := range r.Misses {
			fmt.Fprintf(w, "%s: loop at %#x in %s: DWARF %s; thesis engine %s\n", r.Name, m.Entry, m.Proc, m.Truth, m.Pred)
		}
	}
}
