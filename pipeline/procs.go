package pipeline

import (
	"runtime"

	"bloop/loader"
	"bloop/procs"
)

// Procedures returns the procedures Run analyses in img under opt: those
// of its symbols and PLT stubs, and those package procs finds in code no
// symbol covers (all of a stripped file's code); with opt.Compat, those
// Dyninst makes instead (dyninstProcedures). The PLT's resolver trampoline
// is left out, as hpcstruct leaves it out.
func Procedures(img *loader.Image, opt Options) *procs.Table {
	if opt.Compat {
		workers := opt.Workers
		if workers <= 0 {
			workers = runtime.GOMAXPROCS(0)
		}
		return dyninstProcedures(img, workers)
	}
	t := procs.Find(img, procs.Options{})
	out := make([]procs.Proc, 0, len(t.Procs))
	for _, p := range t.Procs {
		if sec := img.SectionAt(p.Lo); p.Func == nil && sec != nil && sec.IsPLT() {
			continue
		}
		out = append(out, p)
	}
	return &procs.Table{Procs: out}
}

// withProcs returns img with the procedures of t as its Funcs; those
// without a symbol are named by the DWARF procedure entered there, else as
// procs names them (with dyninst, always as procs names them: Dyninst's
// targ<addr>). Without procedures beyond the symbols, img itself.
func withProcs(img *loader.Image, t *procs.Table, dyninst bool) *loader.Image {
	extra := false
	for _, p := range t.Procs {
		extra = extra || p.Func == nil || p.Func.End != p.Hi
	}
	if !extra {
		return img
	}
	funcs := make([]*loader.Func, len(t.Procs))
	for i, p := range t.Procs {
		switch {
		case p.Func != nil && p.Func.End == p.Hi:
			funcs[i] = p.Func
		case p.Func != nil:
			fn := *p.Func
			fn.End = p.Hi
			funcs[i] = &fn
		default:
			name := p.Name()
			if n := dwarfName(img, p.Lo); n != "" && !dyninst {
				name = n
			}
			funcs[i] = &loader.Func{Name: name, Aliases: []string{name}, Addr: p.Lo, End: p.Hi, Found: true}
		}
	}
	return img.WithFuncs(funcs)
}

// dwarfName is the link name (else the name) of the DWARF procedure whose
// entry is addr, or "".
func dwarfName(img *loader.Image, addr uint64) string {
	sub := img.SubprogramAt(addr)
	if sub == nil || sub.EntryPC != addr {
		return ""
	}
	if sub.LinkName != "" {
		return sub.LinkName
	}
	return sub.Name
}
