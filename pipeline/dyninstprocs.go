package pipeline

import (
	"sort"

	"bloop/cfg"
	"bloop/isa"
	"bloop/loader"
	"bloop/par"
	"bloop/procs"
)

// dyninstProcedures are the procedures hpcstruct writes, as Dyninst 12.3's
// ParseAPI makes them. Its hints are the function symbols, and _start at
// the entry point of a program no symbol covers
// (loader.Image.DyninstProgram); from them it follows the code, and every
// direct call (or jump to a PLT stub) it reaches makes a function at the
// target. It neither reads .eh_frame nor parses the gaps between
// functions. So:
//   - a PLT stub is a procedure only where parsed code calls or jumps to
//     it; the stub before runs on over an uncalled one (in libz.so.1 the
//     lone .plt.got stub, __cxa_finalize's, is called only by
//     __do_global_dtors_aux, which no symbol names);
//   - in a stripped library (.dynsym only) the code that only function
//     pointers, constructor tables or FDEs lead to is in no procedure,
//     where the default mode infers one (package procs);
//   - a call target inside a symbol's extent starts no procedure, as in
//     every mode.
func dyninstProcedures(img *loader.Image, workers int) *procs.Table {
	d := newDyninstStarts(img)
	for d.parseNew(workers) {
	}
	return d.table(false)
}

// dyninstStarts collects ParseAPI's function entries.
type dyninstStarts struct {
	img     *loader.Image
	src     map[uint64]procs.Source // the starts found so far, stubs too
	funcs   map[uint64]*loader.Func // the symbols and stubs
	open    []loader.Range          // code outside every symbol's extent and every PLT section
	parsed  map[uint64]uint64       // entry -> the end of the extent its graph was built with
	reached map[uint64]bool         // stubs some parsed code calls or jumps to
	entries []uint64                // the keys of src, sorted
}

func newDyninstStarts(img *loader.Image) *dyninstStarts {
	d := &dyninstStarts{img: img, src: map[uint64]procs.Source{}, funcs: map[uint64]*loader.Func{},
		parsed: map[uint64]uint64{}, reached: map[uint64]bool{}}
	var covered []loader.Range
	for _, fn := range img.Funcs {
		d.src[fn.Addr] = procs.Symbol
		d.funcs[fn.Addr] = fn
		covered = append(covered, loader.Range{Lo: fn.Addr, Hi: fn.End})
	}
	d.open = openCode(img, loader.MergeRanges(covered))
	if img.DyninstProgram && d.isOpen(img.Entry) {
		d.src[img.Entry] = procs.Entry
	}
	d.sortEntries()
	return d
}

// openCode is the code of img outside covered and outside PLT sections
// (every stub is a procedure already), without the stretches that are
// only padding.
func openCode(img *loader.Image, covered []loader.Range) []loader.Range {
	var out []loader.Range
	for _, sec := range img.Sections {
		if sec.IsPLT() {
			continue
		}
		at := sec.Addr
		for _, c := range covered {
			if c.Hi <= at || c.Lo >= sec.End() {
				continue
			}
			if c.Lo > at {
				out = appendCode(out, img, at, c.Lo)
			}
			at = max(at, c.Hi)
		}
		if at < sec.End() {
			out = appendCode(out, img, at, sec.End())
		}
	}
	return out
}

// appendCode appends [lo, hi) to out unless it is only padding.
func appendCode(out []loader.Range, img *loader.Image, lo, hi uint64) []loader.Range {
	if onlyPadding(img, lo, hi) {
		return out
	}
	return append(out, loader.Range{Lo: lo, Hi: hi})
}

// onlyPadding reports whether [lo, hi) holds nothing but the padding
// compilers put between functions (nops of every length, int3): most of
// what lies between the symbols of an unstripped file.
func onlyPadding(img *loader.Image, lo, hi uint64) bool {
	fr, ok := isa.For(img.Machine).(isa.Framer)
	if !ok {
		return false
	}
	for a := lo; a < hi; {
		op := fr.Frame(img.Bytes(a, hi), a)
		if !op.Pad || op.Len == 0 {
			return false
		}
		a += uint64(op.Len)
	}
	return true
}

// isOpen reports whether a is code outside every symbol's extent and no
// start yet.
func (d *dyninstStarts) isOpen(a uint64) bool {
	if _, ok := d.src[a]; ok {
		return false
	}
	i := sort.Search(len(d.open), func(i int) bool { return d.open[i].Hi > a })
	return i < len(d.open) && d.open[i].Lo <= a
}

func (d *dyninstStarts) sortEntries() {
	d.entries = d.entries[:0]
	for a := range d.src {
		d.entries = append(d.entries, a)
	}
	sort.Slice(d.entries, func(i, j int) bool { return d.entries[i] < d.entries[j] })
}

// parseNew builds the graphs of the procedures not yet parsed with their
// present extent (every stub is in the image, so that calls to them are
// known as calls, and to noreturn ones as such), marks the stubs they
// reach and adds the call targets in open code; it reports whether a
// procedure was added.
func (d *dyninstStarts) parseNew(workers int) bool {
	img := withProcs(d.img, d.table(true), true)
	pl := &plan{img: img, noret: noReturnSet(img), region: continuation(img, true), compat: true, fallOut: fixedWidth(img)}
	var todo []int
	for i, fn := range img.Funcs {
		if end, ok := d.parsed[fn.Addr]; !fn.PLT && (!ok || end != fn.End) {
			todo = append(todo, i)
		}
	}
	out := make([]leaving, len(todo))
	par.For(workers, len(todo), func(k int) {
		if g, _, err := pl.graph(todo[k]); err == nil && g != nil {
			out[k] = leavingTargets(g)
		}
	})
	added := false
	for k, i := range todo {
		d.parsed[img.Funcs[i].Addr] = img.Funcs[i].End
		for _, t := range out[k].jumps {
			d.reach(t)
		}
		for _, t := range out[k].calls {
			if !d.reach(t) && d.isOpen(t) {
				d.src[t] = procs.Call
				added = true
			}
		}
	}
	if added {
		d.sortEntries()
	}
	return added
}

// reach marks the stub at t as reached and reports whether there is one.
func (d *dyninstStarts) reach(t uint64) bool {
	if fn := d.funcs[t]; fn != nil && fn.PLT {
		d.reached[t] = true
		return true
	}
	return false
}

// leaving are where a procedure's code goes to other functions: its direct
// calls, and its direct jumps out of its own blocks (tail calls).
type leaving struct{ calls, jumps []uint64 }

func leavingTargets(g *cfg.Graph) leaving {
	out := leaving{calls: g.Calls}
	inside := func(t uint64) bool {
		i := sort.Search(len(g.Blocks), func(i int) bool { return g.Blocks[i].End > t })
		return i < len(g.Blocks) && g.Blocks[i].Start <= t
	}
	for _, b := range g.Blocks {
		if in := b.Last(); (in.Kind == isa.Jump || in.Kind == isa.CondJump) && !inside(in.Target) {
			out.jumps = append(out.jumps, in.Target)
		}
	}
	return out
}

// table gives every start its extent: a symbol's own; a stub's and a
// found procedure's up to the next start or its section's end. With
// allStubs every stub is a start, else only the reached ones (and an
// unreached stub's bytes are the stub's before it).
func (d *dyninstStarts) table(allStubs bool) *procs.Table {
	var starts []uint64
	for _, a := range d.entries {
		if fn := d.funcs[a]; fn == nil || !fn.PLT || allStubs || d.reached[a] {
			starts = append(starts, a)
		}
	}
	t := &procs.Table{Procs: make([]procs.Proc, 0, len(starts))}
	for i, a := range starts {
		p := procs.Proc{Lo: a, Source: d.src[a], Func: d.funcs[a]}
		if p.Func != nil && !p.Func.PLT {
			p.Hi = p.Func.End
		} else {
			p.Hi = d.img.SectionAt(a).End()
			if i+1 < len(starts) {
				p.Hi = min(p.Hi, starts[i+1])
			}
		}
		t.Procs = append(t.Procs, p)
	}
	return t
}
