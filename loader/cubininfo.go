package loader

import (
	"debug/elf"
	"encoding/binary"
	"strings"
)

// A kernel's .nv.info.<kernel> section (its sh_info naming the kernel's
// .text section) is a list of attributes, each a format byte, an attribute
// byte and, for format 4 (a sized value), a 2-byte size and that many
// bytes; the other formats take 2 bytes of value. One of them lists the
// targets of the kernel's indirect branches (BRX), which the code alone
// does not tell: the branch's offset in the section, 4 bytes bloop does not
// need, a count and the targets' offsets, each 4 bytes little-endian
// (seen in quicksilver-sm_70-dr, whose targets fall on the blocks after
// each BRX's bounds check).
const (
	eifmtSized            = 4
	eiattrIndirectTargets = 0x34
)

// indirectTargets reads the targets of the indirect branches of every
// kernel, by the branch's address as laid out (base: each section's
// address there, by index). Malformed attributes end their section's
// list: what was read before them stays.
func indirectTargets(ef *elf.File, base []uint64) map[uint64][]uint64 {
	var out map[uint64][]uint64
	for _, s := range ef.Sections {
		if !strings.HasPrefix(s.Name, ".nv.info.") || int(s.Info) >= len(base) || base[s.Info] == 0 {
			continue
		}
		b, err := s.Data()
		if err != nil {
			continue
		}
		text := base[s.Info]
		for len(b) >= 4 {
			format, attr := b[0], b[1]
			n := 2
			if format == eifmtSized {
				n = 2 + int(binary.LittleEndian.Uint16(b[2:]))
			}
			if 2+n > len(b) {
				break
			}
			val := b[4 : 2+n]
			if format == eifmtSized && attr == eiattrIndirectTargets && len(val) >= 12 {
				at := uint64(binary.LittleEndian.Uint32(val))
				count := int(binary.LittleEndian.Uint32(val[8:]))
				ts := val[12:]
				if count > len(ts)/4 {
					count = len(ts) / 4
				}
				if out == nil {
					out = map[uint64][]uint64{}
				}
				for i := range count {
					out[text+at] = append(out[text+at], text+uint64(binary.LittleEndian.Uint32(ts[4*i:])))
				}
			}
			b = b[2+n:]
		}
	}
	return out
}

// absoluteCalls reads the targets of a cubin's absolute calls (CALL.ABS,
// JCAL), which the linker leaves to a relocation of the instruction: by
// the instruction's address as laid out, the laid-out entry of the
// function the relocation names (syms: the symbol table, without entry 0;
// values: every symbol's laid-out value by symbol-table index). Calls to
// functions outside the cubin (vprintf) name an undefined symbol and have
// none.
func absoluteCalls(ef *elf.File, base []uint64, syms []elf.Symbol, values []uint64) map[uint64]uint64 {
	var out map[uint64]uint64
	for _, r := range ef.Sections {
		if r.Type != elf.SHT_REL && r.Type != elf.SHT_RELA || int(r.Info) >= len(base) || base[r.Info] == 0 {
			continue
		}
		if !strings.HasPrefix(ef.Sections[r.Info].Name, ".text.") {
			continue
		}
		data, err := r.Data()
		if err != nil {
			continue
		}
		eachReloc(r.Type, data, func(e rela) {
			if e.sym == 0 || int(e.sym) > len(syms) || int(e.sym) >= len(values) {
				return
			}
			s := syms[e.sym-1] // Symbols drops entry 0
			if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Section == elf.SHN_UNDEF {
				return
			}
			if e.addend != 0 {
				return // an address inside a function (a return address), no call
			}
			if out == nil {
				out = map[uint64]uint64{}
			}
			out[base[r.Info]+e.off] = values[e.sym]
		})
	}
	return out
}
