package loader

import (
	"debug/elf"
	"sort"
)

// Func is a procedure known from the symbol tables or a PLT stub.
type Func struct {
	Name    string   // the name hpcstruct would pick: the longest alias, ties alphabetical
	Aliases []string // every symbol name at Addr, sorted
	Addr    uint64
	End     uint64 // first byte after the procedure's extent
	PLT     bool
	Sized   bool // a symbol gave the size (else the extent runs to the next procedure)
	// LocalEntry is where calls from within the module enter when that is
	// not Addr: ppc64 ELFv2's local entry point, past the global entry's
	// setup of the TOC pointer. 0: none.
	LocalEntry uint64
	// Found marks a procedure no symbol names: a call target or the entry
	// point (package procs). Dyninst calls such a function targ<addr>.
	Found bool
	// Within is, for a found procedure that starts inside a symbol's
	// extent (compat mode: procs.Table.Within), that symbol's entry; 0:
	// none. hpcstruct names such a function without its PLT-stub test.
	Within uint64
}

type symInfo struct {
	names []string
	size  uint64
	local uint64 // local entry (ppc64), 0: none
}

// symTables are the symbol tables of an ELF file, each decoded once
// (decoding .dynsym again for each use was a fifth of libstdc++'s
// opening): nil when the file has none.
type symTables struct {
	symtab, dynsym []elf.Symbol
}

// readFuncs collects function symbols from .symtab and .dynsym plus PLT stubs,
// one Func per entry address, and bounds each by its size or by the next entry.
// Stripped binaries keep their full .symtab in the separate debug file, so
// dbg (when not nil) contributes its symbols too. dyninstPLT names PLT
// stubs as Dyninst does (pltStubs). Sizes that run past their section
// are counted in bad. It returns the file's symbol tables, for
// dyninstStubs.
func (img *Image) readFuncs(f, dbg *elf.File, dyninstPLT bool, bad *tally) symTables {
	var tabs symTables
	byAddr := map[uint64]*symInfo{}
	var toc uint64
	sa := symbolABI(f.Machine)
	add := func(syms []elf.Symbol, table, file string) {
		for i, s := range syms {
			if sa != nil && s.Name == sa.TOCSymbol() {
				toc = s.Value
			}
			t := elf.ST_TYPE(s.Info)
			if t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC {
				continue
			}
			if s.Section == elf.SHN_UNDEF || s.Name == "" {
				continue
			}
			sec := img.SectionAt(s.Value)
			if sec == nil {
				continue
			}
			if s.Size > sec.End()-s.Value {
				// Cut at the section's end below. Symbols() leaves out
				// the null symbol, index 0.
				bad.addN(Corruption{Kind: CorruptSymbolSize, Section: table, File: file, Offset: uint64(i+1) * elf.Sym64Size, Count: 1})
			}
			si := byAddr[s.Value]
			if si == nil {
				si = &symInfo{}
				byAddr[s.Value] = si
			}
			si.names = append(si.names, s.Name)
			if s.Size > si.size {
				si.size = s.Size
			}
			if l := localEntry(sa, s); l != 0 {
				si.local = l
			}
		}
	}
	if syms, err := symbolTable(f, elf.SHT_SYMTAB); err == nil {
		tabs.symtab = syms
		add(syms, ".symtab", "")
	}
	if syms, err := symbolTable(f, elf.SHT_DYNSYM); err == nil {
		tabs.dynsym = syms
		add(syms, ".dynsym", "")
	}
	if dbg != nil {
		if syms, err := symbolTable(dbg, elf.SHT_SYMTAB); err == nil {
			add(syms, ".symtab", img.DebugFile)
		}
	}
	var funcs []*Func
	for addr, si := range byAddr {
		names := uniqSorted(si.names)
		fn := &Func{Name: pickName(names), Aliases: names, Addr: addr, LocalEntry: si.local}
		if si.size > 0 {
			fn.End, fn.Sized = addr+si.size, true
		}
		funcs = append(funcs, fn)
	}
	img.TOC = tocBase(f, sa, toc)
	for _, stub := range img.pltStubs(f, tabs.dynsym, dyninstPLT) {
		if _, dup := byAddr[stub.Addr]; !dup {
			funcs = append(funcs, stub)
		}
	}
	sort.Slice(funcs, func(i, j int) bool { return funcs[i].Addr < funcs[j].Addr })
	for i, fn := range funcs {
		limit := img.SectionAt(fn.Addr).End()
		if i+1 < len(funcs) && funcs[i+1].Addr < limit {
			limit = funcs[i+1].Addr
		}
		if fn.End == 0 || fn.End > limit {
			fn.End = limit
		}
	}
	img.Funcs = funcs
	return tabs
}

func uniqSorted(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// pickName chooses among aliases as hpcstruct does: the longest name (a mangled
// name carries the most information), ties broken alphabetically.
func pickName(sorted []string) string {
	best := sorted[0]
	for _, n := range sorted[1:] {
		if len(n) > len(best) {
			best = n
		}
	}
	return best
}

// FuncAt returns the procedure whose extent holds addr, or nil.
func (img *Image) FuncAt(addr uint64) *Func {
	i := sort.Search(len(img.Funcs), func(i int) bool { return img.Funcs[i].Addr > addr }) - 1
	if i >= 0 && addr < img.Funcs[i].End {
		return img.Funcs[i]
	}
	return nil
}

// WithFuncs returns a copy of img whose procedures are funcs (sorted by
// Addr, their extents disjoint): the symbols' and those found without one.
// The copy shares everything else with img, which is left unchanged;
// a lazily opened img's DWARF is read first, for both.
func (img *Image) WithFuncs(funcs []*Func) *Image {
	img.LoadDWARF()
	c := *img
	c.Funcs = funcs
	return &c
}
