package loader

import "debug/elf"

// ppc64 ELFv2 specifics of symbols: the TOC base and local entry points.

// tocOffset is where the linker puts the TOC base after the start of
// .got, so that 16-bit offsets from r2 reach 64 KiB of it.
const tocOffset = 0x8000

// tocBase is the TOC base of a ppc64 module: the .TOC. symbol (sym, 0
// when absent), else .got + 0x8000 as the linker sets it; 0 on other
// machines.
func tocBase(f *elf.File, sym uint64) uint64 {
	if f.Machine != elf.EM_PPC64 {
		return 0
	}
	if sym != 0 {
		return sym
	}
	if got := f.Section(".got"); got != nil {
		return got.Addr + tocOffset
	}
	return 0
}

// localEntry is the local entry point of a ppc64 ELFv2 function symbol
// (st_other bits 5-7 give its offset from the global entry: calls from the
// same module, which share its TOC, enter there), else 0.
func localEntry(m elf.Machine, s elf.Symbol) uint64 {
	if m != elf.EM_PPC64 {
		return 0
	}
	v := s.Other >> 5 & 7
	off := uint64(1) << v >> 2 << 2
	if v < 2 || v == 7 {
		return 0 // no local entry (7 is reserved)
	}
	return s.Value + off
}
