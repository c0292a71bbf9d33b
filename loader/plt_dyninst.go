package loader

import (
	"debug/elf"
	"encoding/binary"
	"fmt"

	"bloop/isa"
)

// x86-64 PLT layout as Dyninst 12.3 assumes it: 16-byte entries after the
// 16-byte PLT0.
const x86PLTEntry = 16

// dyninstLinkage is the name Dyninst 12.3 gives each x86-64 PLT stub
// address (ParseAPI's linkage map, from SymtabAPI's function binding
// table), which hpcstruct writes with "@plt":
//
//   - .plt: the i-th relocation of .rela.plt, in file order, names the
//     stub at .plt+16*(i+1), whatever GOT slot that stub jumps through.
//     The linker puts the IRELATIVE relocations of ifunc slots after the
//     JUMP_SLOT ones while their stubs are interleaved, so in libc.so.6
//     the first stub (an ifunc slot's) is called realloc and realloc's
//     own stub calloc; an IRELATIVE relocation names no symbol, and its
//     stub's name is empty ("@plt").
//   - .plt.sec (Intel CET's second PLT): each 16-byte stub by the
//     .rela.plt relocation of the slot its displacement at byte 7 (after
//     endbr64 and the bnd jmp's opcode) points to; an ifunc slot's is
//     ifunc<addr>. Then .plt.got is left unnamed.
//   - .plt.got, only when it is more than 16 bytes (a lone
//     __cxa_finalize stub, or libc.so.6's two, stay targ<addr>): each
//     jmp *disp(%rip) (ff 25) at an instruction start by the .rela.dyn
//     relocation of its slot.
//
// An address in the map with an empty name is a stub Dyninst names "".
func dyninstLinkage(f *elf.File, dyn []elf.Symbol, secs []*Section, ar isa.Arch) map[uint64]string {
	out := map[uint64]string{}
	relaPLT := relocsOf(jmprelSection(f))
	if plt := sectionNamed(secs, ".plt"); plt != nil && len(relaPLT) > 0 {
		fbtNames(out, plt.Addr, relaPLT, dyn)
	}
	if sec := sectionNamed(secs, ".plt.sec"); sec != nil {
		pltSecNames(out, sec, slotNames(relaPLT, dyn))
		return out
	}
	if got := sectionNamed(secs, ".plt.got"); got != nil && len(got.Data) > 16 {
		if s := f.Section(".rela.dyn"); s != nil {
			pltGotNames(out, got, ar, slotNames(relocsOf(s), dyn))
		}
	}
	return out
}

// fbtNames names the stubs of .plt (at pltAddr) after the relocations of
// .rela.plt by position: SymtabAPI's function binding table for x86.
func fbtNames(out map[uint64]string, pltAddr uint64, relocs []rela, dyn []elf.Symbol) {
	for i, r := range relocs {
		out[pltAddr+x86PLTEntry*uint64(i+1)] = symName(dyn, r.sym)
	}
}

// pltSecNames names the stubs of .plt.sec by the slot at the displacement
// Dyninst reads at byte 7 of each.
func pltSecNames(out map[uint64]string, sec *Section, slots map[uint64]string) {
	const disp = 7 // endbr64 (4 bytes), then bnd jmp *disp(%rip): f2 ff 25
	for off := uint64(0); off+disp+4 <= uint64(len(sec.Data)); off += x86PLTEntry {
		d := int32(binary.LittleEndian.Uint32(sec.Data[off+disp:]))
		name, ok := slots[sec.Addr+off+disp+4+uint64(int64(d))]
		if !ok {
			continue
		}
		if name == "" {
			name = fmt.Sprintf("ifunc%x", sec.Addr+off)
		}
		out[sec.Addr+off] = name
	}
}

// pltGotNames names the stubs of .plt.got: decoding from the section's
// start, each instruction that begins with ff 25 (jmp *disp(%rip), read as
// an unsigned displacement) by the relocation of its slot.
func pltGotNames(out map[uint64]string, sec *Section, ar isa.Arch, slots map[uint64]string) {
	for off := uint64(0); off < uint64(len(sec.Data)); {
		in := ar.Decode(sec.Data[off:], sec.Addr+off)
		n := uint64(max(in.Len, 1))
		if off+6 <= uint64(len(sec.Data)) && sec.Data[off] == 0xff && sec.Data[off+1] == 0x25 {
			d := uint64(binary.LittleEndian.Uint32(sec.Data[off+2:]))
			if name, ok := slots[sec.Addr+off+n+d]; ok {
				out[sec.Addr+off] = name
			}
		}
		off += n
	}
}

// slotNames maps each relocated address to the name of its relocation's
// symbol ("" for none, as an IRELATIVE or RELATIVE one); a later
// relocation of the same slot wins.
func slotNames(relocs []rela, dyn []elf.Symbol) map[uint64]string {
	out := make(map[uint64]string, len(relocs))
	for _, r := range relocs {
		out[r.off] = symName(dyn, r.sym)
	}
	return out
}

// symName is the name of dynamic symbol i (1-based as in the file; 0 is
// the null symbol, which has none).
func symName(dyn []elf.Symbol, i uint32) string {
	if i == 0 || int(i) > len(dyn) {
		return ""
	}
	return dyn[i-1].Name
}

// jmprelSection is the PLT's relocation section: the one DT_JMPREL points
// to, else .rela.plt.
func jmprelSection(f *elf.File) *elf.Section {
	if vals, err := f.DynValue(elf.DT_JMPREL); err == nil && len(vals) > 0 {
		for _, s := range f.Sections {
			if s.Addr == vals[0] && s.Type == elf.SHT_RELA {
				return s
			}
		}
	}
	return f.Section(".rela.plt")
}

// relocsOf reads the entries of a SHT_RELA section in file order.
func relocsOf(s *elf.Section) []rela {
	if s == nil || s.Type != elf.SHT_RELA {
		return nil
	}
	data, err := s.Data()
	if err != nil {
		return nil
	}
	var out []rela
	eachRela(data, func(r rela) { out = append(out, r) })
	return out
}

func sectionNamed(secs []*Section, name string) *Section {
	for _, s := range secs {
		if s.Name == name {
			return s
		}
	}
	return nil
}
