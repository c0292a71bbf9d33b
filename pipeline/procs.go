package pipeline

import (
	"bloop/loader"
	"bloop/procs"
)

// Procedures returns the procedures Run analyses in img: those of its
// symbols and PLT stubs, and those package procs finds in code no symbol
// covers (all of a stripped file's code). The PLT's resolver trampoline
// is left out, as hpcstruct leaves it out.
func Procedures(img *loader.Image) *procs.Table {
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
// procs names them. Without procedures beyond the symbols, img itself.
func withProcs(img *loader.Image, t *procs.Table) *loader.Image {
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
			if n := dwarfName(img, p.Lo); n != "" {
				name = n
			}
			funcs[i] = &loader.Func{Name: name, Aliases: []string{name}, Addr: p.Lo, End: p.Hi}
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
