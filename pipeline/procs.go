package pipeline

import (
	"runtime"

	"bloop/dyninst"
	"bloop/loader"
	"bloop/procs"
)

// Procedures returns the procedures Run analyses in img under opt: those
// of its symbols and PLT stubs, and those package procs finds in code no
// symbol covers (all of a stripped file's code); under opt.Dyninst, those
// its parser makes instead (dyninst.Policy.Procedures). The PLT's resolver
// trampoline is left out, as hpcstruct leaves it out.
func Procedures(img *loader.Image, opt Options) *procs.Table {
	if opt.Dyninst != nil {
		workers := opt.Workers
		if workers <= 0 {
			workers = runtime.GOMAXPROCS(0)
		}
		return opt.Dyninst.Procedures(img, workers)
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
// procs names them (under a policy, always as procs names them: Dyninst's
// targ<addr>). Without procedures beyond the symbols, img itself.
func withProcs(img *loader.Image, t *procs.Table, policy *dyninst.Policy) *loader.Image {
	if policy != nil {
		return procs.WithProcs(img, t, nil)
	}
	return procs.WithProcs(img, t, func(p procs.Proc) string {
		if n := dwarfName(img, p.Lo); n != "" {
			return n
		}
		return p.Name()
	})
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
