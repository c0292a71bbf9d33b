// Package pipeline runs bloop's stages over one image: for every procedure,
// CFG, loop forest and scope placement on a bounded worker pool, results in a
// fixed order so output does not depend on the number of workers.
package pipeline

import (
	"fmt"
	"runtime"
	"sort"
	"sync/atomic"

	"bloop/dyninst"
	"bloop/loader"
	"bloop/normalize"
	"bloop/procs"
	"bloop/scopes"
	"bloop/source"
	"bloop/structure"
)

// Engine selects how inlined code is placed.
type Engine int

// Placement engines for --inline.
const (
	Auto      Engine = iota // Hybrid when the binary has DWARF procedure or inline records, else Heuristic
	DWARF                   // DWARF inline trees (matches hpcstruct)
	Heuristic               // the thesis's heuristics (line tables and descriptors only)
	Hybrid                  // DWARF inline contexts, loops moved to their statement's line in the source
)

// ParseEngine reads the --inline flag.
func ParseEngine(s string) (Engine, error) {
	switch s {
	case "auto":
		return Auto, nil
	case "dwarf":
		return DWARF, nil
	case "heuristic":
		return Heuristic, nil
	case "hybrid":
		return Hybrid, nil
	}
	return Auto, fmt.Errorf("unknown inline engine %q (want auto, dwarf, heuristic or hybrid)", s)
}

// Options tune an analysis.
type Options struct {
	Workers int // <= 0: all cores
	Engine  Engine
	// Normalize selects the thesis's normalization passes; nil means the
	// engine's default (all for the heuristic engine, none for DWARF).
	Normalize *normalize.Level
	// Dyninst, when set, reproduces the tree of the tool whose parser it
	// emulates (dyninst.Hpcstruct: real hpcstruct's): its procedures and
	// parse, the DWARF engine, no normalization, loop lines from exit
	// conditions, and names from GNU's demangler (c++filt) when it is
	// installed. nil: bloop's own analysis.
	Dyninst *dyninst.Policy
	// GPUCFG builds the control-flow graphs of GPU code under Dyninst, as
	// hpcstruct --gpucfg yes does (the default mode always builds them).
	GPUCFG bool
	// SourceDirs are where the hybrid mode looks for sources (besides the
	// paths the line table gives) to put loops on their statement's line.
	SourceDirs []string
	// Sources, when set, is the finder the hybrid mode uses (SourceDirs
	// ignored), so that the caller can see which sources were read.
	Sources *source.Finder
	// SourceFetcher, when set, is asked for the sources the hybrid mode
	// finds neither on disk nor under SourceDirs, by the image's build-id
	// (a debuginfod client); nil: disk only.
	SourceFetcher source.Fetcher
	// Procs are the procedures to analyse, from Procedures; nil: Run
	// computes them.
	Procs *procs.Table
	// Only, when not nil, lists addresses (sorted): only the procedures
	// holding one are analysed and written, each as a whole analysis
	// writes it (a report's sampled code). nil: every procedure.
	Only []uint64
}

// Problem is something in one procedure that bloop worked around by a
// documented rule; the procedure is still written.
type Problem struct {
	Func string
	Addr uint64
	Kind string // what was wrong, for counting: one of the Kind* constants
	Err  error  // the detail
}

// Kinds of problems and the rule applied to each.
const (
	// Instructions overlap (code jumps into another instruction's bytes):
	// each owns its bytes up to the next instruction's start (cfg.Inst.Span).
	KindOverlap = "overlapping instructions"
	// The first instruction does not decode: the procedure gets statements
	// from the line table over its extent, and no loops.
	KindEntry = "entry does not decode"
	// Decoding stopped on bytes that are no instruction: the code after
	// them gets statements from the line table, outside loops.
	KindUndecodable = "undecodable bytes"
	// The control-flow graph could not be built: statements only.
	KindGraph = "no control-flow graph"
	// Placement left bytes in two statements or outside the procedure: the
	// first statement (in tree order) keeps them, outside bytes are cut.
	KindRepaired = "statement ranges repaired"
	// Placement failed (a bloop bug): written without loops, or empty.
	KindInternal = "internal error"
)

func (p *Problem) Error() string {
	return fmt.Sprintf("procedure %s at %#x: %s: %v", p.Func, p.Addr, p.Kind, p.Err)
}

// Analyze builds the scope tree of img in memory; problems in single
// procedures are returned beside it. Run streams instead.
func Analyze(img *loader.Image, opt Options) (*structure.Module, []*Problem) {
	var procs []structure.ProcResult
	probs, _ := Run(img, opt, func(file string, p *structure.Scope) error {
		procs = append(procs, structure.ProcResult{Scope: p, File: file})
		return nil
	})
	mod := structure.NewModule(img.Path, img.Name, procs)
	mod.HasCalls = HasCalls(img, opt)
	return mod, probs
}

// Run analyses every procedure of img and hands each to emit in output
// order (files by name, procedures by entry) as soon as it and all before
// it are done; a nil procedure is a file hpcstruct lists empty (compat). At most a window of finished procedures waits, so memory
// does not grow with the image. It stops at the first error emit returns.
func Run(img *loader.Image, opt Options, emit func(file string, p *structure.Scope) error) ([]*Problem, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if opt.Procs == nil {
		opt.Procs = Procedures(img, opt)
	}
	img = withProcs(img, opt.Procs, opt.Dyninst)
	pl := newPlan(img, opt, workers)
	order, files := pl.outputOrder()
	if opt.Only != nil {
		order = holding(img.Funcs, order, opt.Only)
	}
	type result struct {
		p     *structure.Scope
		probs []*Problem
	}
	// Positions in flight (taken, not yet written) never exceed window, so
	// position k's slot, last used by k-window, is free when k is taken.
	window := 64 * workers
	slots := make([]chan result, window)
	for i := range slots {
		slots[i] = make(chan result, 1)
	}
	permits := make(chan struct{}, window)
	var next atomic.Int64
	var stop atomic.Bool
	for w := 0; w < workers; w++ {
		go func() {
			for {
				permits <- struct{}{}
				k := int(next.Add(1) - 1)
				if k >= len(order) {
					<-permits
					return
				}
				if stop.Load() {
					slots[k%window] <- result{}
					continue
				}
				p, probs := pl.proc(order[k])
				slots[k%window] <- result{p, probs}
			}
		}()
	}
	var probs []*Problem
	var err error
	// Files without procedures (hpcstruct's, in compat mode) are emitted
	// with a nil procedure, in their place in file order.
	var empty []string
	if opt.Dyninst != nil {
		empty = emptyFiles(img, pl.subs, files)
	}
	emitEmpty := func(before string, all bool) {
		for len(empty) > 0 && err == nil && (all || empty[0] < before) {
			err = emit(empty[0], nil)
			empty = empty[1:]
		}
	}
	for k, i := range order {
		r := <-slots[k%window]
		<-permits
		if err != nil {
			continue
		}
		probs = append(probs, r.probs...)
		if emitEmpty(files[i], false); err == nil {
			err = emit(files[i], r.p)
		}
		if err != nil {
			stop.Store(true)
		}
	}
	emitEmpty("", true)
	return probs, err
}

// outputOrder sorts the procedures as they are written: by file name (byte
// order; the policy's tool's file where there is one), then by entry
// address.
func (pl *plan) outputOrder() (order []int, files []string) {
	img := pl.img
	files = make([]string, len(img.Funcs))
	order = make([]int, len(img.Funcs))
	for i, fn := range img.Funcs {
		files[i] = scopes.ProcFile(scopes.Input{Img: img, Func: fn, Sub: pl.subs[i], Hpcstruct: pl.policy != nil})
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		fa, fb := files[order[a]], files[order[b]]
		if fa != fb {
			return fa < fb
		}
		return img.Funcs[order[a]].Addr < img.Funcs[order[b]].Addr
	})
	return order, files
}

// holding keeps the procedures of order (indexes in funcs) whose extent
// holds one of the sorted addresses.
func holding(funcs []*loader.Func, order []int, addrs []uint64) []int {
	var out []int
	for _, i := range order {
		fn := funcs[i]
		k := sort.Search(len(addrs), func(k int) bool { return addrs[k] >= fn.Addr })
		if k < len(addrs) && addrs[k] < fn.End {
			out = append(out, i)
		}
	}
	return out
}
