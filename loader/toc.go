package loader

import (
	"debug/elf"

	"bloop/isa"
)

// The symbols' ABI specifics (isa.SymbolABI, ppc64 ELFv2's): the TOC base
// and local entry points.

// symbolABI is the instruction set's symbol ABI, nil when its symbols are
// plain addresses.
func symbolABI(m elf.Machine) isa.SymbolABI {
	sa, _ := isa.For(m).(isa.SymbolABI)
	return sa
}

// tocBase is the TOC base of a module whose ABI has one: the TOC symbol
// (sym, 0 when absent), else where the linker puts it after .got; 0 on
// other machines.
func tocBase(f *elf.File, sa isa.SymbolABI, sym uint64) uint64 {
	if sa == nil {
		return 0
	}
	if sym != 0 {
		return sym
	}
	if got := f.Section(".got"); got != nil {
		return sa.TOCFromGOT(got.Addr)
	}
	return 0
}

// localEntry is the local entry point of a function symbol (calls from
// the same module, which share its TOC, enter there), else 0.
func localEntry(sa isa.SymbolABI, s elf.Symbol) uint64 {
	if sa == nil {
		return 0
	}
	return sa.LocalEntry(s.Value, s.Other)
}
