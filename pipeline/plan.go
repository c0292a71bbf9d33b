package pipeline

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"bloop/cfg"
	"bloop/dyninst"
	"bloop/havlak"
	"bloop/heuristic"
	"bloop/isa"
	"bloop/loader"
	"bloop/normalize"
	"bloop/par"
	"bloop/scopes"
	"bloop/source"
	"bloop/structure"
)

// plan is what every procedure's analysis shares: the chosen engine and
// its settings, and what is known about the whole image.
type plan struct {
	img     *loader.Image
	lvl     normalize.Level
	names   *scopes.Names
	hybrid  *source.Finder               // Hybrid: where sources are looked for
	bounds  *heuristic.Bounds            // Heuristic: procedure regions
	policy  *dyninst.Policy              // the parser emulated, its tree written (nil: none)
	parse   *dyninst.Parse               // how graphs are built: which calls never return, the procedure table's answers
	subs    []*loader.Subprogram         // by index in img.Funcs
	claimed map[uint64][]structure.Range // entries another procedure's CFG continues into, and the code it parses there
	groups  map[uint64]group             // compat: symbols' procedures that share their extent (groupsOf)
	gpu     isa.Arch                     // a cubin's instruction set, when its graphs are built (gpucfg.go)
}

func newPlan(img *loader.Image, opt Options, workers int) *plan {
	pl := &plan{img: img, policy: opt.Dyninst, parse: opt.Dyninst.Parse(img)}
	pl.gpu = gpuArch(img, opt)
	engine := engineFor(img, opt)
	pl.lvl = normalize.None
	if engine == Heuristic {
		pl.lvl = normalize.All
	}
	if opt.Normalize != nil && opt.Dyninst == nil {
		pl.lvl = *opt.Normalize
	}
	var gnu map[string]string
	if opt.Dyninst != nil {
		gnu = gnuNames(img)
	}
	pl.names = scopes.NewNames(gnu)
	pl.names.DWARFAliases = opt.Dyninst != nil
	pl.names.Hpcstruct = opt.Dyninst != nil
	if engine == Hybrid {
		pl.hybrid = opt.Sources
		if pl.hybrid == nil {
			pl.hybrid = &source.Finder{Dirs: opt.SourceDirs, Fetcher: opt.SourceFetcher}
		}
		pl.hybrid.Module(img.BuildID)
	}
	if engine == Heuristic {
		pl.bounds = heuristic.NewBounds(img)
	}
	pl.subs = make([]*loader.Subprogram, len(img.Funcs))
	for i, fn := range img.Funcs {
		pl.subs[i] = img.SubprogramAt(fn.Addr)
	}
	// What the policy's parse finds: the procedures that never return,
	// and those whose parse may run into another's entry.
	runsOn := pl.parse.Settle(opt.Procs, workers)
	pl.claimed = pl.claimedEntries(workers, runsOn)
	if opt.Procs != nil {
		pl.groups = pl.groupsOf(opt.Procs.Within)
	}
	return pl
}

// group is a symbol's extent as hpcstruct fills its gaps: the code the
// functions Dyninst made inside it parse there, and the symbol's end.
type group struct {
	covered []structure.Range
	end     uint64
}

// groupsOf finds, for each procedure that starts inside a symbol's
// extent (procs.Table.Within, by entry: the symbol procedure's entry),
// the code its graph reaches, which is no gap of the symbol's procedure,
// and its end, by the symbol procedure's entry.
func (pl *plan) groupsOf(within map[uint64]uint64) map[uint64]group {
	if len(within) == 0 {
		return nil
	}
	groups := map[uint64]group{}
	for i, fn := range pl.img.Funcs {
		sym, ok := within[fn.Addr]
		if !ok {
			continue
		}
		gr := groups[sym]
		gr.end = max(gr.end, fn.End)
		if g, _, err := pl.graph(i); err == nil && g != nil {
			for _, b := range g.Blocks {
				gr.covered = append(gr.covered, structure.Range{Lo: b.Start, Hi: b.End})
			}
		}
		groups[sym] = gr
	}
	return groups
}

// engineFor is the engine that places img's code under opt.
func engineFor(img *loader.Image, opt Options) Engine {
	if opt.Dyninst != nil {
		return DWARF
	}
	if opt.Engine != Auto {
		return opt.Engine
	}
	// DWARF procedure records come with inline records whenever the
	// compiler inlined (gcc and clang emit them even at -g1 and
	// -gline-tables-only), so their absence there means nothing was
	// inlined. The thesis engine is for line tables without them. With
	// DWARF, the hybrid mode: DWARF contexts, and loops on their statement's
	// line where the sources can be read (else it is the DWARF engine). It
	// finds the most source loops on their line on the corpus (bloop eval
	// --source).
	if img.HasInlineInfo() || len(img.Procs) > 0 {
		return Hybrid
	}
	return Heuristic
}

// Open loads path for an analysis with opt. Procedure descriptors, which
// only the thesis engine reads, are left out unless it may run; in auto
// mode an image without DWARF procedures, where it does, is read again.
func Open(path string, lopt loader.Options, opt Options) (*loader.Image, error) {
	lopt.SkipDescriptors = opt.Dyninst != nil || opt.Engine != Heuristic
	lopt = opt.Dyninst.Loader(lopt)
	img, err := loader.Open(path, lopt)
	if err != nil || !lopt.SkipDescriptors || engineFor(img, opt) != Heuristic {
		return img, err
	}
	lopt.SkipDescriptors = false
	return loader.Open(path, lopt)
}

// callNext is `call .+5`: Dyninst parses it as a jump, so the procedure
// that makes it continues into the code after it.
var callNext = []byte{0xe8, 0, 0, 0, 0}

// followsCallNext reports whether the bytes before addr are a callNext.
func followsCallNext(img *loader.Image, addr uint64) bool {
	return addr >= 5 && bytes.Equal(img.Bytes(addr-5, addr), callNext)
}

// claimedEntries finds the procedures another one continues into, which
// are written with their gaps only, as hpcstruct writes them: under a
// policy those that the parse of a procedure of runsOn (dyninst.Facts.RunsOn)
// runs into; in the default mode those that follow a call to the next
// instruction. Only a procedure whose entry follows such a call can be
// one, and only a procedure whose code holds that call can continue into
// it: the one the call lies in, the parent of a .cold part, and,
// transitively, any that continues into those by the same idiom. Their
// graphs are built (and dropped) here.
func (pl *plan) claimedEntries(workers int, runsOn map[uint64]bool) map[uint64][]structure.Range {
	img := pl.img
	if isa.For(img.Machine) == nil {
		return nil
	}
	var sources []int
	if pl.policy != nil {
		for i, fn := range img.Funcs {
			if runsOn[fn.Addr] {
				sources = append(sources, i)
			}
		}
	} else {
		sources = pl.callNextSources()
	}
	if len(sources) == 0 {
		return nil
	}
	type cont struct {
		entries []uint64
		blocks  []structure.Range
	}
	continued := make([]cont, len(sources))
	par.For(workers, len(sources), func(k int) {
		if g, _, err := pl.graph(sources[k]); err == nil && g != nil {
			continued[k].entries = g.Continued
			for _, b := range g.Blocks {
				continued[k].blocks = append(continued[k].blocks, structure.Range{Lo: b.Start, Hi: b.End})
			}
		}
	})
	claimed := map[uint64][]structure.Range{}
	for k, c := range continued {
		for _, t := range c.entries {
			f := img.FuncAt(t)
			if t == img.Funcs[sources[k]].Addr || f == nil {
				continue
			}
			rs := claimed[t]
			if rs == nil {
				rs = []structure.Range{}
			}
			for _, b := range c.blocks {
				if b.Lo < f.End && b.Hi > f.Addr {
					rs = append(rs, b)
				}
			}
			claimed[t] = rs
		}
	}
	return claimed
}

// callNextSources are the procedures whose graphs may continue into
// another one by a call to the next instruction (claimedEntries).
func (pl *plan) callNextSources() []int {
	img := pl.img
	set := map[*loader.Func]bool{}
	var work []*loader.Func
	add := func(f *loader.Func) {
		if f != nil && !f.PLT && !set[f] {
			set[f] = true
			work = append(work, f)
		}
	}
	for _, fn := range img.Funcs {
		if followsCallNext(img, fn.Addr) {
			add(img.FuncAt(fn.Addr - 5))
		}
	}
	if len(set) == 0 {
		return nil
	}
	byName := map[string]*loader.Func{}
	for _, fn := range img.Funcs {
		byName[fn.Name] = fn
	}
	// The closure: parents of .cold parts, and callers continuing into them.
	for len(work) > 0 {
		f := work[len(work)-1]
		work = work[:len(work)-1]
		if base, _, ok := strings.Cut(f.Name, ".cold"); ok {
			add(byName[base])
		}
		if followsCallNext(img, f.Addr) {
			add(img.FuncAt(f.Addr - 5))
		}
	}
	var sources []int
	for i, fn := range img.Funcs {
		if set[fn] {
			sources = append(sources, i)
		}
	}
	return sources
}

// graph builds procedure i's control-flow graph and loop forest; nil
// without error for PLT stubs and architectures without a decoder.
func (pl *plan) graph(i int) (g *cfg.Graph, f *havlak.Forest, err error) {
	defer func() {
		if r := recover(); r != nil {
			g, f, err = nil, nil, fmt.Errorf("internal error: %v", r)
		}
	}()
	fn := pl.img.Funcs[i]
	if fn.PLT {
		return nil, nil, nil
	}
	opt := pl.parse.Options()
	if pl.img.Arch == loader.CUDA {
		if pl.gpu == nil {
			return nil, nil, nil // no graph of this GPU code (gpucfg.go)
		}
		// The generation's instruction set bound to the cubin, as
		// hpcstruct --gpucfg reads nvdisasm's graph: no noreturn
		// inference, tail calls or Dyninst decoding.
		opt = cfg.Options{Arch: pl.gpu}
	}
	g, err = cfg.Build(pl.img, fn.Addr, fn.Addr, fn.End, opt)
	if errors.Is(err, cfg.ErrArch) || errors.Is(err, cfg.ErrDyninstEntry) {
		// Statements and inlined code still, no loops. An entry Dyninst
		// 12.3 does not decode leaves its parse empty (compat mode).
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	succs := g.Succs()
	if pl.policy != nil {
		// hpcstruct's loops are Dyninst's: the same forest for the same
		// depth-first order (havlak.TestSameAsWMZC), so search as it does.
		succs = g.DyninstSuccs()
	}
	return g, havlak.Find(len(g.Blocks), g.Entry, succs), nil
}

// proc analyses procedure i. Whatever goes wrong, it returns a procedure:
// as much of it as could be understood, with the problems met.
func (pl *plan) proc(i int) (*structure.Scope, []*Problem) {
	fn := pl.img.Funcs[i]
	var probs []*Problem
	note := func(kind string, err error) {
		probs = append(probs, &Problem{Func: fn.Name, Addr: fn.Addr, Kind: kind, Err: err})
	}
	in := scopes.Input{Img: pl.img, Func: fn, Sub: pl.subs[i], Names: pl.names, Hpcstruct: pl.policy != nil,
		BodyLines: pl.img.Arch.IsAMDGPU()} // clang's AMD GPU branches have line 0
	if pl.gpu != nil && pl.bounds == nil {
		in.Device = gpuDevice(pl.img) // the DWARF engine's (HasCalls)
	}
	if cov, ok := pl.claimed[fn.Addr]; ok {
		in.Claimed, in.Covered = true, cov
	}
	if gr, ok := pl.groups[fn.Addr]; ok {
		in.GroupCovered, in.GroupEnd = gr.covered, gr.end
	}
	g, forest, err := pl.graph(i)
	switch {
	case errors.Is(err, cfg.ErrEntry):
		note(KindEntry, err)
	case err != nil:
		note(KindGraph, err)
	case g != nil:
		if g.Overlaps > 0 {
			note(KindOverlap, fmt.Errorf("%d instructions run into the next one", g.Overlaps))
		}
		if g.Undecodable > 0 {
			note(KindUndecodable, fmt.Errorf("%d bytes", g.Undecodable))
		}
		in.Graph, in.Forest = g, forest
	}
	p, err := pl.place(in)
	if err != nil && in.Graph != nil {
		note(KindInternal, fmt.Errorf("%v; written without loops", err))
		in.Graph, in.Forest = nil, nil
		p, err = pl.place(in)
	}
	if err != nil {
		note(KindInternal, fmt.Errorf("%v; written empty", err))
		p, _, _ = scopes.ProcHeader(in)
		return p, probs
	}
	if n := repairProc(in, p); n > 0 {
		note(KindRepaired, fmt.Errorf("%d ranges", n))
	}
	return p, probs
}

// place builds the procedure's scope tree with the plan's engine.
func (pl *plan) place(in scopes.Input) (s *structure.Scope, err error) {
	defer func() {
		if r := recover(); r != nil {
			s, err = nil, fmt.Errorf("%v", r)
		}
	}()
	if pl.bounds != nil {
		s, _ = heuristic.BuildProc(in, pl.bounds, pl.lvl)
		return s, nil
	}
	s, _ = scopes.BuildProc(in)
	if pl.hybrid != nil {
		source.SnapLoops(s, pl.hybrid)
	}
	normalize.Run(s, pl.lvl, nil)
	return s, nil
}
