package loader

import (
	"debug/elf"
	"fmt"
	"strings"

	"bloop/isa"
)

// ppc64 ELFv2 PLT call stubs. The linker writes one per imported function
// in the code sections (in .init for the calls _init makes), usually
// without a symbol; .plt itself is data. Each stub loads its .plt slot and
// jumps there (isa's PLTSlot reads the shape), and the slot's JUMP_SLOT
// relocation names the function: calloc's stub is calloc@plt.

// codeStubs names the PLT call stubs an instruction set finds in the code
// (isa.StubFinder), each a procedure from its entry to its bctr.
func (img *Image) codeStubs(f *elf.File, dyn []elf.Symbol, sf isa.StubFinder) []*Func {
	slots := gotRelocs(f, dyn, jumpSlot)
	var out []*Func
	for _, s := range img.Sections {
		for _, st := range sf.CodeStubs(img, s.Data, s.Addr, func(slot uint64) bool { return slots[slot] != "" }) {
			name := slots[st.Slot]
			out = append(out, &Func{Name: name + "@plt", Aliases: []string{name + "@plt"}, Addr: st.Addr, End: st.End, PLT: true, Sized: true})
		}
	}
	return out
}

// DyninstStubs turns img's ppc64 PLT stubs into the procedures Dyninst 12.3,
// and so hpcstruct, makes of them:
//
//   - only a stub some bl calls is a procedure: Dyninst makes functions at
//     call targets, and the stub _start branches to (__libc_start_main's)
//     is parsed as part of _start (ctrl-ppc64le-gcc12-O2);
//   - its name is that of its `<hex>.plt_call.<name>` symbol when the
//     function is in .dynsym and .rela.plt, else targ<addr> (Dyninst names
//     the linkage functions from those symbols, not from the code);
//   - it runs to the next procedure, and gets hpcstruct's "@plt" only when
//     that is at most 32 bytes away: the stub before an uncalled one
//     absorbs it and keeps the bare name (calloc in
//     ctrl-ppc64le-gcc12-O2, __cxa_finalize in nest-ppc64le-gfortran12-O2).
//
// It also lists the local entries calls reach (Image.DyninstEntries).
func (img *Image) dyninstStubs(f *elf.File, tabs symTables) {
	ar := isa.ForTOC(f.Machine, img.TOC)
	if _, ok := ar.(isa.StubFinder); !ok {
		return
	}
	called := map[uint64]bool{}
	for _, s := range img.Sections {
		for off := uint64(0); off+4 <= uint64(len(s.Data)); off += 4 {
			if in := ar.Decode(s.Data[off:], s.Addr+off); in.Kind == isa.Call {
				called[in.Target] = true
			}
		}
	}
	for _, fn := range img.Funcs {
		if fn.LocalEntry != 0 && called[fn.LocalEntry] {
			img.DyninstEntries = append(img.DyninstEntries, fn.LocalEntry)
		}
	}
	names := stubSymbolNames(f, tabs)
	funcs := img.Funcs[:0]
	for _, fn := range img.Funcs {
		if !fn.PLT || called[fn.Addr] {
			funcs = append(funcs, fn)
		}
	}
	img.Funcs = funcs
	for i, fn := range funcs {
		if !fn.PLT {
			continue
		}
		fn.End, fn.Sized = img.SectionAt(fn.Addr).End(), false
		if i+1 < len(funcs) && funcs[i+1].Addr < fn.End {
			fn.End = funcs[i+1].Addr
		}
		name, ok := names[fn.Addr]
		if !ok {
			name = fmt.Sprintf("targ%x", fn.Addr)
		}
		if fn.End-fn.Addr <= 32 {
			name += "@plt" // hpcstruct's test for a stub: a short function without a symbol
		}
		fn.Name, fn.Aliases = name, []string{name}
	}
}

// stubSymbolNames maps the linker's stub symbols to the function each
// calls, as Dyninst reads them: `<8 hex digits>.plt_call.<name>[@version]
// [+addend]` (and the .plt_branch., .long_branch. forms), kept when name
// is a dynamic symbol with a .rela.plt relocation and the stub symbol
// name is unique.
func stubSymbolNames(f *elf.File, tabs symTables) map[uint64]string {
	out := map[uint64]string{}
	syms := tabs.symtab
	if syms == nil {
		return out
	}
	dyn := map[string]bool{}
	for _, s := range tabs.dynsym {
		dyn[s.Name] = true
	}
	relocated := map[string]bool{}
	for _, name := range gotRelocs(f, tabs.dynsym, jumpSlot) {
		relocated[name] = true
	}
	count := map[string]int{}
	for _, s := range syms {
		count[s.Name]++
	}
	for _, s := range syms {
		if len(s.Name) <= 8 || count[s.Name] != 1 {
			continue
		}
		name := ""
		for _, kind := range []string{".plt_call.", ".plt_branch.", ".long_branch.", ".plt_branch_r2off.", ".long_branch_r2off."} {
			if strings.HasPrefix(s.Name[8:], kind) {
				name = s.Name[8+len(kind):]
				break
			}
		}
		if i := strings.LastIndexByte(name, '+'); i >= 0 {
			name = name[:i]
		}
		if i := strings.IndexByte(name, '@'); i >= 0 {
			name = name[:i]
		}
		if name != "" && dyn[name] && relocated[name] {
			out[s.Value] = name
		}
	}
	return out
}
