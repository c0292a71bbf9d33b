package dyninst

import (
	"sort"

	"bloop/isa"
	"bloop/loader"
	"bloop/procs"
	"bloop/structure"
)

// Procedures are the procedures hpcstruct writes, as Dyninst 12.3's
// ParseAPI makes them, with what its parse learns about them
// (procs.Table.NoReturn, procs.Table.RunsOn, procs.Table.CallTargets). Its hints are the function
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
//     every mode; the target of a jump alone in a symbol's entry block
//     does, on x86-64 (entryJumps).
//
// Code is reached as Dyninst's parse reaches it: through the fall-through
// of a call only when the callee returns (Parse.Facts, whose return
// statuses a procedure found later can change), so the procedures are
// found in rounds, each parsing the image with those found so far.
func (p *Policy) Procedures(img *loader.Image, workers int) *procs.Table {
	return p.discover(img, workers, newParseMemo())
}

// discover runs the rounds, each reusing what memo kept of the last (nil:
// none).
func (p *Policy) discover(img *loader.Image, workers int, memo *parseMemo) *procs.Table {
	d := newDiscovery(img)
	if p != nil && p.decode(img.Machine).TailMark != nil {
		d.entryJumps()
	}
	for round := 0; ; round++ {
		ps := p.Parse(procs.WithProcs(img, d.table(true), nil))
		if memo != nil {
			memo.begin(ps)
		}
		facts := ps.Facts(workers)
		// Each round only adds procedures; the bound is for safety.
		if !d.add(facts) || round == maxParseRounds {
			t := d.table(false)
			t.NoReturn, t.RunsOn = facts.NoReturn, facts.RunsOn
			if memo != nil {
				// The image Run analyses is this table's: sweep its
				// procedures now, most of them from the rounds' sweeps.
				ct := &callTargets{img: procs.WithProcs(img, t, nil), memo: memo.calls}
				t.CallTargets = ct.targets()
			}
			return t
		}
	}
}

// maxParseRounds bounds the rounds of parsing: few are needed.
const maxParseRounds = 32

// discovery is ParseAPI's view of an image's procedures, built up by
// parsing.
type discovery struct {
	img     *loader.Image
	src     map[uint64]procs.Source // the starts found so far, stubs too
	funcs   map[uint64]*loader.Func // the symbols and stubs
	open    []structure.Range       // code outside every symbol's extent and every PLT section
	reached map[uint64]bool         // stubs some parsed code calls or jumps to
	entries []uint64                // the keys of src, sorted
	within  map[uint64]uint64       // starts inside a symbol's extent: that symbol's entry (entryJumps)
}

// entryJumps adds the functions Dyninst 12.3 makes inside a symbol's
// extent on x86-64: its tail-call test (IA_x86::isTailCall) takes a
// direct jump that is the only instruction of a function's entry block
// for a tail call ("jump as only insn in entry block"), whatever its
// target, and the parse makes a function at the target. Parser::finalize
// turns a tail call back into a branch only when the function's own
// blocks hold the target, which the one block of such a function never
// does; so the function is that jump alone, and the code after it is the
// target's function (python3.11d's ucs1lib_find_max_char starts with a
// jmp into its own loop: hpcstruct writes the loop under <unknown
// procedure> 0x5112d0, a procedure whose code starts before the address
// it names). A target outside the extent is a tail call in every mode.
func (d *discovery) entryJumps() {
	ar := isa.For(d.img.Machine)
	for a, fn := range d.funcs {
		if fn.PLT {
			continue
		}
		in := ar.Decode(d.img.Bytes(a, fn.End), a)
		if in.Kind != isa.Jump || in.Target <= a || in.Target >= fn.End {
			continue
		}
		if _, ok := d.src[in.Target]; ok {
			continue
		}
		if d.within == nil {
			d.within = map[uint64]uint64{}
		}
		d.src[in.Target] = procs.Call
		d.within[in.Target] = a
	}
	d.sortEntries()
}

func newDiscovery(img *loader.Image) *discovery {
	d := &discovery{img: img, src: map[uint64]procs.Source{}, funcs: map[uint64]*loader.Func{}, reached: map[uint64]bool{}}
	var covered []structure.Range
	for _, fn := range img.Funcs {
		d.src[fn.Addr] = procs.Symbol
		d.funcs[fn.Addr] = fn
		covered = append(covered, structure.Range{Lo: fn.Addr, Hi: fn.End})
	}
	d.open = openCode(img, structure.MergeRanges(covered))
	if img.DyninstProgram && d.isOpen(img.Entry) {
		d.src[img.Entry] = procs.Entry
	}
	d.sortEntries()
	return d
}

// openCode is the code of img outside covered and outside PLT sections
// (every stub is a procedure already), without the stretches that are
// only padding.
func openCode(img *loader.Image, covered []structure.Range) []structure.Range {
	var out []structure.Range
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
func appendCode(out []structure.Range, img *loader.Image, lo, hi uint64) []structure.Range {
	if onlyPadding(img, lo, hi) {
		return out
	}
	return append(out, structure.Range{Lo: lo, Hi: hi})
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
func (d *discovery) isOpen(a uint64) bool {
	if _, ok := d.src[a]; ok {
		return false
	}
	i := sort.Search(len(d.open), func(i int) bool { return d.open[i].Hi > a })
	return i < len(d.open) && d.open[i].Lo <= a
}

func (d *discovery) sortEntries() {
	d.entries = d.entries[:0]
	for a := range d.src {
		d.entries = append(d.entries, a)
	}
	sort.Slice(d.entries, func(i, j int) bool { return d.entries[i] < d.entries[j] })
}

// add takes what a round's parse reached: the stubs called or jumped to,
// and the call targets in open code, which start procedures. It reports
// whether there are new procedures to parse.
func (d *discovery) add(facts *Facts) bool {
	for t := range facts.jumps {
		d.reach(t)
	}
	found := false
	for t := range facts.calls {
		if !d.reach(t) && d.isOpen(t) {
			d.src[t] = procs.Call
			found = true
		}
	}
	d.sortEntries()
	return found
}

// reach marks the stub at t as reached and reports whether there is one.
func (d *discovery) reach(t uint64) bool {
	if fn := d.funcs[t]; fn != nil && fn.PLT {
		d.reached[t] = true
		return true
	}
	return false
}

// table gives every start its extent: a symbol's own; a stub's and a
// found procedure's up to the next start or its section's end. With
// allStubs every stub is a start, else only the reached ones (and an
// unreached stub's bytes are the stub's before it).
func (d *discovery) table(allStubs bool) *procs.Table {
	var starts []uint64
	for _, a := range d.entries {
		if fn := d.funcs[a]; fn == nil || !fn.PLT || allStubs || d.reached[a] {
			starts = append(starts, a)
		}
	}
	t := &procs.Table{Procs: make([]procs.Proc, 0, len(starts)), Within: d.within}
	for i, a := range starts {
		p := procs.Proc{Lo: a, Source: d.src[a], Func: d.funcs[a]}
		if p.Func != nil && !p.Func.PLT {
			// A function Dyninst makes inside the extent (entryJumps)
			// ends the symbol's part.
			p.Hi = p.Func.End
			if i+1 < len(starts) && d.within[starts[i+1]] == a {
				p.Hi = starts[i+1]
			}
		} else if sym, ok := d.within[a]; ok {
			p.Hi = d.funcs[sym].End
			if i+1 < len(starts) {
				p.Hi = min(p.Hi, starts[i+1])
			}
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
