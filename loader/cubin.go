package loader

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// NVIDIA's cubins are ELF files with two departures that the rest of the
// loader need not know about, and that openCubin hides behind an overlay:
//
//   - e_version holds the CUDA ABI version (EV_CURRENT+101 for nvcc 10.2),
//     which debug/elf rejects: the overlay shows 1.
//   - Every kernel has its own .text.<name> section at address 0, and the
//     symbols, line table and DWARF refer to code by section-relative
//     offsets through relocations. hpcstruct lays the image out before it
//     reads it (HPCToolkit's relocateCubin): every PROGBITS section at its
//     file offset, function symbols moved with their section, and the
//     debug sections' relocations applied. The overlay shows that layout,
//     so addresses are the ones hpcstruct writes (0x12ee0 for a kernel
//     whose section starts 0x12ee0 bytes into the file).

// Offsets of Elf64_Ehdr fields read here.
const (
	ehVersion   = 20
	ehShoff     = 40
	ehFlags     = 48
	ehShentsize = 58
	ehSize      = 64
)

// Offsets of the fields patched in Elf64_Shdr and Elf64_Sym.
const (
	shAddr    = 16
	symValue  = 8
	symSize64 = 24
)

// cubin is a cubin laid out as hpcstruct lays it out.
type cubin struct {
	view     *overlay
	file     *elf.File
	instSize uint64
	sm       int // the SM architecture number (62 for sm_62)
	indirect map[uint64][]uint64
	calls    map[uint64]uint64
	warnings []string
}

// openCubin reads the cubin f (of size bytes, header hdr) as a linked image.
func openCubin(path string, f io.ReaderAt, hdr []byte) (*cubin, error) {
	if len(hdr) < ehSize {
		return nil, errorf(path, "truncated ELF header (%d of %d bytes)", len(hdr), ehSize)
	}
	version := []byte{1, 0, 0, 0} // EV_CURRENT, where the CUDA ABI version was
	v, _ := newOverlay(f, []patch{{ehVersion, version}})
	ef, err := elf.NewFile(v)
	if err != nil {
		return nil, errorf(path, "bad cubin: %v", err)
	}
	c := &cubin{}
	c.sm, err = cudaSM(hdr)
	if err != nil {
		return nil, errorf(path, "%v", err)
	}
	c.instSize = 16
	if c.sm < 70 {
		c.instSize = 8
	}
	shoff := int64(binary.LittleEndian.Uint64(hdr[ehShoff:]))
	shentsize := int64(binary.LittleEndian.Uint16(hdr[ehShentsize:]))
	ps := []patch{{ehVersion, version}}
	// Section addresses: each PROGBITS section at its file offset.
	base := make([]uint64, len(ef.Sections))
	for i, s := range ef.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Addr == 0 {
			base[i] = s.Offset
			ps = append(ps, patch{shoff + int64(i)*shentsize + shAddr, le64(s.Offset)})
		}
	}
	c.indirect = indirectTargets(ef, base)
	syms, values, symPatches, err := layoutSymbols(ef, base)
	if err != nil {
		// The kernels are known by their symbols alone.
		return nil, errorf(path, "bad cubin: symbol table: %v", err)
	}
	ps = append(ps, symPatches...)
	c.calls = absoluteCalls(ef, base, syms, values)
	relPatches, skipped := debugRelocations(ef, f, values)
	ps = append(ps, relPatches...)
	view, dropped := newOverlay(f, ps)
	if n := skipped + dropped; n > 0 {
		c.warnings = append(c.warnings, fmt.Sprintf("%s: %d relocations of debug sections not applied (unknown type, symbol or offset)", path, n))
	}
	if c.file, err = elf.NewFile(view); err != nil {
		return nil, errorf(path, "bad cubin: %v", err)
	}
	c.view = view
	return c, nil
}

// cudaSM is the cubin's SM architecture number, which decides the width
// of an instruction hpcstruct steps by: 8 bytes up to sm_6x (Maxwell and
// Pascal pair instructions with scheduling words, each 8 bytes), 16 from
// sm_70 (Volta); and the encoding the instruction set decodes. It is
// e_flags' low byte in ABI version 1 (EI_ABIVERSION 7) and bits 8-15
// from ABI version 2 (8, sm_100 on).
func cudaSM(hdr []byte) (int, error) {
	flags := binary.LittleEndian.Uint32(hdr[ehFlags:])
	sm := flags & 0xff
	if hdr[elf.EI_ABIVERSION] >= 8 {
		sm = flags >> 8 & 0xff
	}
	if sm == 0 {
		return 0, fmt.Errorf("cubin names no SM architecture (e_flags %#x)", flags)
	}
	return int(sm), nil
}

// layoutSymbols moves every symbol defined in a laid-out section with it,
// returning the symbol table (as ef.Symbols gives it, without entry 0),
// each symbol's address by index in the table (for the relocations) and
// the patches to .symtab.
func layoutSymbols(ef *elf.File, base []uint64) ([]elf.Symbol, []uint64, []patch, error) {
	symtab := ef.SectionByType(elf.SHT_SYMTAB)
	if symtab == nil {
		return nil, nil, nil, nil
	}
	syms, err := ef.Symbols()
	if err != nil {
		return nil, nil, nil, err
	}
	values := make([]uint64, len(syms)+1) // Symbols drops entry 0
	var ps []patch
	for i, s := range syms {
		values[i+1] = s.Value
		if int(s.Section) >= len(base) || base[s.Section] == 0 {
			continue
		}
		values[i+1] += base[s.Section]
		off := int64(symtab.Offset) + int64(i+1)*symSize64 + symValue
		ps = append(ps, patch{off, le64(values[i+1])})
	}
	return syms, values, ps, nil
}

// NVIDIA's relocation types for data (R_NV_32, R_NV_64 and their G
// variants): the only ones in debug sections.
const (
	rNV32  = 1
	rNV64  = 2
	rNVG32 = 3
	rNVG64 = 4
)

// debugRelocations are the patches that apply the relocations of the
// .debug_* sections: S + A, where A is the RELA addend or, for REL, the
// bytes in place. (nvcc 12's RELA sections keep other values in place:
// the addend is the one that lies inside the kernel.) skipped counts the
// relocations left out: unknown types, symbols or offsets.
func debugRelocations(ef *elf.File, f io.ReaderAt, syms []uint64) (ps []patch, skipped int) {
	for _, r := range ef.Sections {
		if r.Type != elf.SHT_REL && r.Type != elf.SHT_RELA || int(r.Info) >= len(ef.Sections) {
			continue
		}
		target := ef.Sections[r.Info]
		if !strings.HasPrefix(target.Name, ".debug_") || target.Type != elf.SHT_PROGBITS || target.Flags&elf.SHF_COMPRESSED != 0 {
			continue
		}
		data, err := r.Data()
		if err != nil {
			skipped++
			continue
		}
		eachReloc(r.Type, data, func(e rela) {
			width := uint64(0)
			switch e.typ {
			case rNV32, rNVG32:
				width = 4
			case rNV64, rNVG64:
				width = 8
			}
			if width == 0 || int(e.sym) >= len(syms) || e.off > target.Size || target.Size-e.off < width {
				skipped++
				return
			}
			at := int64(target.Offset + e.off)
			addend := e.addend
			if r.Type == elf.SHT_REL {
				var in [8]byte
				if _, err := f.ReadAt(in[:width], at); err != nil {
					skipped++
					return
				}
				addend = binary.LittleEndian.Uint64(in[:])
			}
			ps = append(ps, patch{at, le64(syms[e.sym] + addend)[:width]})
		})
	}
	return ps, skipped
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
