// Package procs finds the procedures of an image: where each starts and
// where it ends. Symbols give them where the image has symbols; a stripped
// file still holds the ELF entry point, .eh_frame's FDEs, the constructor
// tables and direct calls, and in the code none of those cover, starts are
// inferred as in Tallent, Mellor-Crummey and Fagan, "Binary Analysis for
// Measurement and Attribution of Program Performance" (PLDI 2009), section
// 2.1. bloop struct and the unwinder both take their procedures from here.
package procs

import (
	"fmt"
	"sort"

	"bloop/isa"
	"bloop/loader"
	"bloop/structure"
)

// Source says how a procedure start was found. A start found in several
// ways counts under the first of them in this order.
type Source uint8

// Sources of procedure starts.
const (
	Symbol    Source = iota // a function symbol or a PLT stub
	Entry                   // the ELF entry point
	EHFrame                 // an FDE's initial location in .eh_frame
	InitArray               // a pointer in .init_array, .fini_array or .preinit_array, or .dynamic's DT_INIT or DT_FINI
	Call                    // the target of a direct call
	Gap                     // inferred in code no other source covers
	NumSources
)

var sourceNames = [NumSources]string{"symbols", "entry", "eh_frame", "init_array", "call targets", "gaps"}

func (s Source) String() string {
	if s < NumSources {
		return sourceNames[s]
	}
	return fmt.Sprintf("Source(%d)", s)
}

// Proc is one procedure's extent [Lo, Hi).
type Proc struct {
	Lo, Hi uint64
	Source Source
	Func   *loader.Func // the symbol or PLT stub; nil for the other sources
}

// Name is the procedure's name: its symbol's; else _start at the entry
// point; else "targ" and the address in lowercase hex, which is how
// Dyninst, and so hpcstruct, names a function it finds without a symbol.
func (p Proc) Name() string {
	switch {
	case p.Func != nil:
		return p.Func.Name
	case p.Source == Entry:
		return "_start"
	}
	return fmt.Sprintf("targ%x", p.Lo)
}

// Options tune what the inference may do.
type Options struct {
	// SplitUnsized lets starts from the other sources divide the extent
	// of a symbol without a size, which otherwise runs to the next symbol.
	// The unwinder wants the finer bounds (hand-written code often has no
	// sizes); the structure keeps such a symbol's procedure whole, as
	// hpcstruct does.
	SplitUnsized bool
}

// Table holds the procedures of one image.
type Table struct {
	Procs []Proc // sorted by Lo; extents are disjoint
	// NoReturn and RunsOn, when set, are what the parse that found the
	// procedures learned (Dyninst's, in compat mode): the entries of the
	// procedures found never to return (besides those named so), and of
	// those whose code may run on past their extent into another's.
	NoReturn, RunsOn map[uint64]bool
	// CallTargets, when set, are the targets of the direct calls a linear
	// sweep of these procedures' code finds (compat mode's discovery
	// swept them already; cfg.Oracle.Called asks).
	CallTargets map[uint64]bool
	// Within, when set, holds the procedures that start inside a
	// symbol's extent (compat mode: Dyninst's function at the target of
	// a jump alone in a symbol's entry block), each with the entry of
	// that symbol's procedure, whose extent it ends. hpcstruct writes the
	// gaps of the symbol's whole extent under the symbol's procedure.
	Within map[uint64]uint64
}

// Counts returns how many procedures each source found.
func (t *Table) Counts() [NumSources]int {
	var n [NumSources]int
	for _, p := range t.Procs {
		n[p.Source]++
	}
	return n
}

// finder collects starts from all sources.
type finder struct {
	img     *loader.Image
	arch    isa.Arch
	framer  isa.Framer        // the instruction set's frame decoder; nil when it has none
	stubs   isa.LinkerStubs   // linker code that is no procedure; nil: none known
	src     map[uint64]Source // every start found, with its first source
	marks   startMarks        // the starts of src in the code, for known
	funcs   map[uint64]*loader.Func
	covered []structure.Range // symbol extents: no other start inside
	ends    map[uint64]uint64 // an FDE's end bounds its procedure as a size does
	frames  []structure.Range // FDE extents of accepted starts: no gap inference there
}

// compute finds img's procedures (Find shares them).
func compute(img *loader.Image, opt Options) *Table {
	f := &finder{img: img, src: map[uint64]Source{}, funcs: map[uint64]*loader.Func{}, ends: map[uint64]uint64{}}
	f.marks = newStartMarks(img)
	for _, fn := range img.Funcs {
		f.setSrc(fn.Addr, Symbol)
		f.funcs[fn.Addr] = fn
		if fn.Sized || !opt.SplitUnsized {
			f.covered = append(f.covered, structure.Range{Lo: fn.Addr, Hi: fn.End})
		}
	}
	f.arch = isa.ForTOC(img.Machine, img.TOC)
	f.glink()
	f.covered = structure.MergeRanges(f.covered)
	// Inference reads prologues and epilogues: the architectures
	// without a frame decoder keep their symbols' procedures only.
	f.stubs, _ = f.arch.(isa.LinkerStubs)
	if fr, ok := f.arch.(isa.Framer); ok {
		f.framer = fr
		f.hints()
		f.infer()
	}
	return f.table()
}

// GlinkName is the name of ppc64's lazy-binding resolver, as binutils'
// synthetic symbol (objdump, gdb) names it.
const GlinkName = "__glink_PLTresolve"

// glink adds ppc64's lazy-binding resolver, which no symbol names but
// .dynamic does (DT_PPC64_GLINK), as a procedure of its own extent, in
// stripped and unstripped files alike. Dyninst makes none of it (compat
// mode's discovery does not come here); the lazy entries after it, one
// branch each, stay in none (LinkerStub).
func (f *finder) glink() {
	g, ok := f.arch.(isa.GlinkResolvers)
	if !ok || f.img.Glink == 0 {
		return
	}
	lo, hi, ok := g.GlinkResolver(f.img, f.img.Glink)
	if _, known := f.src[lo]; !ok || known || !f.img.IsCode(lo) || inside(structure.MergeRanges(f.covered), lo) {
		return
	}
	f.setSrc(lo, Symbol)
	f.funcs[lo] = &loader.Func{Name: GlinkName, Aliases: []string{GlinkName}, Addr: lo, End: hi, Sized: true}
	f.covered = append(f.covered, structure.Range{Lo: lo, Hi: hi})
}

// hints adds the starts the file names without symbols: the entry point,
// the FDEs (whose ranges bound their procedures) and the constructor
// tables.
func (f *finder) hints() {
	img := f.img
	f.add(img.Entry, Entry)
	for _, r := range img.Frames {
		if f.symbolNear(r) {
			continue
		}
		s, ok := f.src[r.Lo]
		if !ok && f.add(r.Lo, EHFrame) {
			s, ok = EHFrame, true
		}
		if ok && s != Symbol {
			f.ends[r.Lo] = max(f.ends[r.Lo], r.Hi)
			f.frames = append(f.frames, r)
		}
	}
	f.frames = structure.MergeRanges(f.frames)
	for _, a := range img.InitFuncs {
		f.add(a, InitArray)
	}
}

// symbolNear reports whether a symbol starts in the first bytes of FDE
// range r, after its start: glibc begins __restore_rt's FDE at the byte
// before it, for unwinders that look up pc-1.
func (f *finder) symbolNear(r structure.Range) bool {
	fs := f.img.Funcs
	i := sort.Search(len(fs), func(i int) bool { return fs[i].Addr > r.Lo })
	return i < len(fs) && fs[i].Addr < min(r.Lo+16, r.Hi)
}

// add records a start found by source s unless it is no code, lies inside
// a symbol's extent, or was found before; it reports whether it was new.
func (f *finder) add(a uint64, s Source) bool {
	if _, ok := f.src[a]; ok || !f.img.IsCode(a) || inside(f.covered, a) {
		return false
	}
	if f.stubs != nil && f.stubs.LinkerStub(f.img, a) {
		return false
	}
	f.setSrc(a, s)
	return true
}

// table turns the starts into extents: each runs to the next start or
// its section's end, and no further than its symbol's size or its FDE.
func (f *finder) table() *Table {
	starts := make([]uint64, 0, len(f.src))
	for a := range f.src {
		starts = append(starts, a)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	t := &Table{Procs: make([]Proc, 0, len(starts))}
	for i, a := range starts {
		hi := ^uint64(0) // a hand-made image's symbol may lie outside its sections
		if sec := f.img.SectionAt(a); sec != nil {
			hi = sec.End()
		}
		if i+1 < len(starts) && starts[i+1] < hi {
			hi = starts[i+1]
		}
		p := Proc{Lo: a, Source: f.src[a], Func: f.funcs[a]}
		if fn := p.Func; fn != nil && fn.End > a { // a size, or (unsized) the next symbol
			hi = min(hi, fn.End)
		}
		if e := f.ends[a]; e > a {
			hi = min(hi, e)
		}
		if hi == ^uint64(0) {
			hi = a + 1 // no section, no size and nothing after it
		}
		p.Hi = hi
		t.Procs = append(t.Procs, p)
	}
	return t
}

// inside reports whether a lies in one of the sorted, disjoint ranges rs
// and is not where that range begins.
func inside(rs []structure.Range, a uint64) bool {
	i := find(rs, a)
	return i >= 0 && rs[i].Lo != a
}

// find returns the index of the range of rs holding a, or -1.
func find(rs []structure.Range, a uint64) int {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Lo > a }) - 1
	if i >= 0 && a < rs[i].Hi {
		return i
	}
	return -1
}
