package pipeline

import (
	"sort"

	"bloop/isa"
	"bloop/loader"
	"bloop/par"
	"bloop/procs"
)

// dyninstProcedures are the procedures hpcstruct writes, as Dyninst 12.3's
// ParseAPI makes them, with what its parse learns about them
// (procs.Table.NoReturn, procs.Table.Claimed). Its hints are the function
// symbols, and _start at the entry point of a program no symbol covers
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
//
// Whether a call returns is the callee's return status, which the parse
// finds (returnStatus): a function of the module returns when a return
// instruction, an unresolved indirect jump or a tail call to one that
// returns is reachable; only a stub's is taken from its name. A parse runs
// on wherever code falls through, past its extent into the next function
// too (libc.so.6's malloc_printerr calls __libc_message, which has a
// reachable ret, and runs on into int_mallinfo), and a function whose entry
// another one's parse reaches that way is written without its own code.
func dyninstProcedures(img *loader.Image, workers int) *procs.Table {
	d := newDyninstParse(img)
	// Each round only adds procedures and return statuses that follow from
	// the last; the bound is for safety.
	for round := 0; round < maxParseRounds && d.parseNew(workers); round++ {
	}
	return d.table(false)
}

// maxParseRounds bounds the rounds of parsing: statuses settle in a few.
const maxParseRounds = 32

// dyninstParse is ParseAPI's view of an image, built up by parsing.
type dyninstParse struct {
	img     *loader.Image
	src     map[uint64]procs.Source // the starts found so far, stubs too
	funcs   map[uint64]*loader.Func // the symbols and stubs
	open    []loader.Range          // code outside every symbol's extent and every PLT section
	reached map[uint64]bool         // stubs some parsed code calls or jumps to
	entries []uint64                // the keys of src, sorted
	parsed  map[uint64]*parseResult // by entry: the last graph's summary
	noret   map[uint64]bool         // functions of the module whose parse finds no return
	// stubNoret tells the stubs whose names say they do not return.
	stubNoret func(uint64) bool
}

// parseResult is what one procedure's graph says about the procedure.
type parseResult struct {
	end       uint64 // the extent's end it was built with
	calls     []uint64
	tails     []uint64        // targets of direct jumps out of its own code
	returns   bool            // a return or an unresolved indirect jump is reachable
	continued []uint64        // other entries its parse ran into (cfg.Graph.Continued)
	noretSeen map[uint64]bool // the callees taken not to return when it was built
}

func newDyninstParse(img *loader.Image) *dyninstParse {
	d := &dyninstParse{img: img, src: map[uint64]procs.Source{}, funcs: map[uint64]*loader.Func{},
		reached: map[uint64]bool{}, parsed: map[uint64]*parseResult{}, noret: map[uint64]bool{}}
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
func (d *dyninstParse) isOpen(a uint64) bool {
	if _, ok := d.src[a]; ok {
		return false
	}
	i := sort.Search(len(d.open), func(i int) bool { return d.open[i].Hi > a })
	return i < len(d.open) && d.open[i].Lo <= a
}

func (d *dyninstParse) sortEntries() {
	d.entries = d.entries[:0]
	for a := range d.src {
		d.entries = append(d.entries, a)
	}
	sort.Slice(d.entries, func(i, j int) bool { return d.entries[i] < d.entries[j] })
}

// parseNew (re)builds the graphs that are out of date: new procedures,
// those whose extent changed, and those calling a function found not to
// return since. It adds the call targets in open code, marks the stubs
// reached and recomputes the return statuses; it reports whether anything
// changed.
func (d *dyninstParse) parseNew(workers int) bool {
	img := withProcs(d.img, d.table(true), true)
	if d.stubNoret == nil {
		d.stubNoret = noReturnSet(img)
	}
	pl := &plan{img: img, region: continuation(img, true), compat: true, fallOut: true, noret: d.noReturn}
	var todo []int
	for i, fn := range img.Funcs {
		if r := d.parsed[fn.Addr]; !fn.PLT && (r == nil || r.end != fn.End || d.stale(r)) {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return false
	}
	out := make([]*parseResult, len(todo))
	par.For(workers, len(todo), func(k int) {
		out[k] = summarize(pl, todo[k])
	})
	for k, i := range todo {
		d.parsed[img.Funcs[i].Addr] = out[k]
		for _, t := range out[k].tails {
			d.reach(t)
		}
		for _, t := range out[k].calls {
			if !d.reach(t) && d.isOpen(t) {
				d.src[t] = procs.Call
			}
		}
	}
	d.sortEntries()
	d.noret = d.returnStatus()
	return true
}

// noReturn reports whether a call to a does not return: a stub's name
// says so, a function of the module's parse does.
func (d *dyninstParse) noReturn(a uint64) bool {
	if fn := d.funcs[a]; fn != nil && fn.PLT {
		return d.stubNoret(a)
	}
	return d.noret[a]
}

// stale reports whether r's graph was built with another return status
// for one of its callees than the present one.
func (d *dyninstParse) stale(r *parseResult) bool {
	for _, c := range r.calls {
		if d.noReturn(c) != r.noretSeen[c] {
			return true
		}
	}
	return false
}

// summarize builds procedure i's graph under pl and says what it shows.
func summarize(pl *plan, i int) *parseResult {
	fn := pl.img.Funcs[i]
	r := &parseResult{end: fn.End, returns: true} // without a graph, assume it returns
	g, _, err := pl.graph(i)
	if err != nil || g == nil {
		return r
	}
	r.returns = false
	r.calls, r.continued = g.Calls, g.Continued
	inside := func(t uint64) bool {
		k := sort.Search(len(g.Blocks), func(k int) bool { return g.Blocks[k].End > t })
		return k < len(g.Blocks) && g.Blocks[k].Start <= t
	}
	for _, b := range g.Blocks {
		in := b.Last()
		switch in.Kind {
		case isa.Return, isa.CondReturn:
			r.returns = true
		case isa.IndirectJump:
			r.returns = r.returns || len(in.Table) == 0
		case isa.Jump, isa.CondJump:
			if !inside(in.Target) {
				r.tails = append(r.tails, in.Target)
			}
		}
	}
	r.noretSeen = map[uint64]bool{}
	for _, c := range r.calls {
		if pl.noret(c) {
			r.noretSeen[c] = true
		}
	}
	return r
}

// reach marks the stub at t as reached and reports whether there is one.
func (d *dyninstParse) reach(t uint64) bool {
	if fn := d.funcs[t]; fn != nil && fn.PLT {
		d.reached[t] = true
		return true
	}
	return false
}

// returnStatus finds the functions of the module that never return: those
// whose parse reaches neither a return (nor an unresolved indirect jump)
// nor a tail call to a function that returns. A stub returns unless its
// name says otherwise; code no procedure starts at is taken to return.
func (d *dyninstParse) returnStatus() map[uint64]bool {
	returns := map[uint64]bool{}
	callers := map[uint64][]uint64{} // tail-call target -> the functions jumping to it
	var work []uint64
	for a, r := range d.parsed {
		if r.returns {
			returns[a] = true
			work = append(work, a)
			continue
		}
		for _, t := range r.tails {
			callers[t] = append(callers[t], a)
			_, local := d.parsed[t]
			if fn := d.funcs[t]; (fn != nil && fn.PLT && !d.stubNoret(t)) || (!local && (fn == nil || !fn.PLT)) {
				if !returns[a] {
					returns[a] = true
					work = append(work, a)
				}
			}
		}
	}
	for len(work) > 0 {
		t := work[len(work)-1]
		work = work[:len(work)-1]
		for _, a := range callers[t] {
			if !returns[a] {
				returns[a] = true
				work = append(work, a)
			}
		}
	}
	noret := map[uint64]bool{}
	for a := range d.parsed {
		if !returns[a] {
			noret[a] = true
		}
	}
	return noret
}

// table gives every start its extent: a symbol's own; a stub's and a
// found procedure's up to the next start or its section's end. With
// allStubs every stub is a start, else only the reached ones (and an
// unreached stub's bytes are the stub's before it). The final table
// carries the return statuses and the entries other parses ran into.
func (d *dyninstParse) table(allStubs bool) *procs.Table {
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
	if !allStubs {
		t.NoReturn, t.Claimed = d.noret, map[uint64]bool{}
		for a, r := range d.parsed {
			for _, c := range r.continued {
				if _, entry := d.src[c]; entry && c != a { // not the padding it ran over
					t.Claimed[c] = true
				}
			}
		}
	}
	return t
}
