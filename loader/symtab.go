package loader

import (
	"debug/elf"
	"errors"
	"fmt"
	"strings"
)

// symbolTable decodes the symbol table of type typ (SHT_SYMTAB or
// SHT_DYNSYM) as debug/elf's Symbols and DynamicSymbols do, without the
// null symbol, but with each name a part of one copy of the string
// table: a string made per symbol was half of decoding libc's 10,000
// (and libstdc++'s opening went mostly to its dynamic symbols). The
// symbols' version fields are not filled (nothing here reads them).
// 32-bit files are left to debug/elf.
func symbolTable(f *elf.File, typ elf.SectionType) ([]elf.Symbol, error) {
	if f.Class != elf.ELFCLASS64 {
		if typ == elf.SHT_DYNSYM {
			return f.DynamicSymbols()
		}
		return f.Symbols()
	}
	sec := f.SectionByType(typ)
	if sec == nil {
		return nil, elf.ErrNoSymbols
	}
	data, err := sec.Data()
	if err != nil {
		return nil, fmt.Errorf("cannot load symbol section: %w", err)
	}
	if len(data) == 0 {
		return nil, elf.ErrNoSymbols
	}
	if len(data)%elf.Sym64Size != 0 {
		return nil, errors.New("length of symbol section is not a multiple of Sym64Size")
	}
	if sec.Link == 0 || sec.Link >= uint32(len(f.Sections)) {
		return nil, errors.New("cannot load string table section: section has invalid string table link")
	}
	strdata, err := f.Sections[sec.Link].Data()
	if err != nil {
		return nil, fmt.Errorf("cannot load string table section: %w", err)
	}
	strs := string(strdata)
	bo := f.ByteOrder
	data = data[elf.Sym64Size:] // the null symbol
	syms := make([]elf.Symbol, len(data)/elf.Sym64Size)
	for i := range syms {
		b := data[i*elf.Sym64Size : (i+1)*elf.Sym64Size]
		syms[i] = elf.Symbol{
			Name:    cString(strs, bo.Uint32(b[0:4])),
			Info:    b[4],
			Other:   b[5],
			Section: elf.SectionIndex(bo.Uint16(b[6:8])),
			Value:   bo.Uint64(b[8:16]),
			Size:    bo.Uint64(b[16:24]),
		}
	}
	return syms, nil
}

// cString is the NUL-terminated string at off in a string table, "" when
// off is outside it or the string runs to its end unterminated.
func cString(strs string, off uint32) string {
	if uint64(off) >= uint64(len(strs)) {
		return ""
	}
	s := strs[off:]
	if n := strings.IndexByte(s, 0); n >= 0 {
		return s[:n]
	}
	return ""
}
