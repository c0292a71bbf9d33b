package loader

import (
	"debug/elf"
	"fmt"
	"strings"

	"bloop/isa"
)

// pltStubs names the stubs of .plt and .plt.sec from the JUMP_SLOT relocation of
// the GOT slot each one jumps through, and those of .plt.got (stubs for
// functions whose address is also taken) from the GLOB_DAT relocation of
// their slot, as hpcstruct does (Dyninst 12.3) when .plt.got holds more
// than one stub: in every binary with a lone stub (always __cxa_finalize's,
// 27 reference files) hpcstruct calls it targ<addr>@plt, while it names
// all 3 and 25 stubs of libgsl and libstdc++. Stubs no relocation names
// are targ<addr>@plt.
//
// With dyninstNames, stubs are named as Dyninst 12.3 names them: those it
// does not name are targ<addr>@plt, all of aarch64's .plt (every aarch64
// reference file), and x86-64's get dyninstLinkage's names.
func (img *Image) pltStubs(f *elf.File, dyn []elf.Symbol, dyninstNames bool) []*Func {
	slots := gotRelocs(f, dyn, jumpSlot)
	var globDat map[uint64]string
	var out []*Func
	ar := isa.ForTOC(f.Machine, img.TOC)
	if ar == nil {
		return nil
	}
	if sf, ok := ar.(isa.StubFinder); ok {
		return img.codeStubs(f, dyn, sf) // call stubs in the code; .plt is data
	}
	layout, ok := ar.(isa.PLTLayouter)
	if !ok {
		return nil // a PLT layout not decoded
	}
	pl := layout.PLTLayout()
	var linkage map[uint64]string // Dyninst's names by stub address (x86-64)
	if dyninstNames && img.Arch == AMD64 {
		linkage = dyninstLinkage(f, dyn, img.Sections, ar)
	}
	for _, s := range img.Sections {
		var entSize, first uint64
		names := slots
		calledOnly := false // Dyninst's unnamed stubs (aarch64)
		switch s.Name {
		case ".plt":
			// PLT0, the resolver trampoline, is no procedure.
			entSize, first = pl.Entry, pl.Header
			if img.Arch == ARM64 && dyninstNames {
				names, calledOnly = nil, true
			}
		case ".plt.sec":
			entSize = pl.SecEntry
		case ".plt.got":
			entSize = 8
			if sh := f.Section(s.Name); sh != nil && sh.Entsize > 0 {
				entSize = sh.Entsize
			}
			names = nil
			if uint64(len(s.Data)) > entSize {
				if globDat == nil {
					globDat = gotRelocs(f, dyn, globData)
				}
				names = globDat
			}
		default:
			continue
		}
		var called map[uint64]bool
		if calledOnly {
			called = img.branchTargets(ar, s)
		}
		for off := first; off+entSize <= uint64(len(s.Data)); off += entSize {
			addr := s.Addr + off
			if called != nil && !called[addr] {
				// Dyninst finds unnamed stubs only as targets of the code it
				// parses; an uncalled one (__gxx_personality_v0@plt) is part
				// of the stub before it.
				if n := len(out); n > 0 && out[n-1].End == addr {
					out[n-1].End += entSize
				}
				continue
			}
			name := ""
			if got, ok := ar.PLTSlot(s.Data[off:off+entSize], addr); ok {
				name = names[got]
			}
			if linkage != nil {
				name = dyninstStubName(linkage, addr)
			} else if name == "" {
				name = fmt.Sprintf("targ%x", addr)
			}
			out = append(out, &Func{Name: name + "@plt", Aliases: []string{name + "@plt"}, Addr: addr, End: addr + entSize, PLT: true, Sized: true})
		}
	}
	return out
}

// dyninstStubName is the name Dyninst gives the stub at addr: its linkage
// name, which may be empty, else targ<addr>.
func dyninstStubName(linkage map[uint64]string, addr uint64) string {
	if name, ok := linkage[addr]; ok {
		return name
	}
	return fmt.Sprintf("targ%x", addr)
}

// branchTargets are the addresses in section s that direct branches and
// calls elsewhere in the code go to, found by a linear sweep (exact where
// instructions have one width).
func (img *Image) branchTargets(ar isa.Arch, s *Section) map[uint64]bool {
	out := map[uint64]bool{}
	for _, c := range img.Sections {
		if c == s {
			continue
		}
		for a := c.Addr; a < c.End(); {
			in := ar.Decode(img.Bytes(a, c.End()), a)
			switch in.Kind {
			case isa.Call, isa.Jump, isa.CondJump:
				if in.Target >= s.Addr && in.Target < s.End() {
					out[in.Target] = true
				}
			}
			a += uint64(max(in.Len, ar.Align()))
		}
	}
	return out
}

// GOT relocation kinds gotRelocs reads.
const (
	jumpSlot = iota // a PLT stub's slot
	globData        // a GOT slot of data or a .plt.got stub
)

// gotRelocTypes are the relocation types of the kinds, on the machines
// whose dynamic relocations are told apart by type; on the others every
// relocation of .rela.plt counts (as a jump slot).
var gotRelocTypes = map[elf.Machine][2]uint32{
	elf.EM_X86_64: {uint32(elf.R_X86_64_JMP_SLOT), uint32(elf.R_X86_64_GLOB_DAT)},
}

// gotRelocs maps GOT slot addresses to the symbol that the dynamic
// relocations of kind k name: JUMP_SLOT in .rela.plt, GLOB_DAT in
// .rela.dyn (see gotRelocTypes).
func gotRelocs(f *elf.File, dyn []elf.Symbol, k int) map[uint64]string {
	out := map[uint64]string{}
	for _, sec := range f.Sections {
		// Dynamic relocations are loaded (SHF_ALLOC); the static ones a
		// kernel keeps (vmlinux: hundreds of MB of .rela.text) name no
		// GOT slot, and reading them took 8 s.
		if sec.Type != elf.SHT_RELA || sec.Flags&elf.SHF_ALLOC == 0 || !strings.HasPrefix(sec.Name, ".rela") {
			continue
		}
		types, typed := gotRelocTypes[f.Machine]
		if !typed && !strings.HasPrefix(sec.Name, ".rela.plt") {
			continue
		}
		data, err := sec.Data()
		if err != nil {
			continue
		}
		eachRela(data, func(r rela) {
			if typed && r.typ != types[k] {
				return
			}
			if r.sym == 0 || int(r.sym) > len(dyn) {
				return
			}
			out[r.off] = dyn[r.sym-1].Name
		})
	}
	return out
}
