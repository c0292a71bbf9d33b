package loader

import (
	"debug/elf"
	"encoding/binary"
)

// rela is one Elf64_Rela entry: the slot it fills, its type, the dynamic
// symbol it names (0: none) and its addend.
type rela struct {
	off    uint64
	typ    uint32
	sym    uint32
	addend uint64
}

// eachRela calls fn for each entry of a SHT_RELA section's bytes (bloop
// reads 64-bit little-endian images only).
func eachRela(data []byte, fn func(rela)) { eachReloc(elf.SHT_RELA, data, fn) }

// eachReloc calls fn for each entry of the bytes of a relocation section
// of type typ: Elf64_Rela, or for SHT_REL Elf64_Rel, whose addend is in
// place (0 in the rela given).
func eachReloc(typ elf.SectionType, data []byte, fn func(rela)) {
	size := 24
	if typ == elf.SHT_REL {
		size = 16
	}
	for off := 0; off+size <= len(data); off += size {
		info := binary.LittleEndian.Uint64(data[off+8:])
		r := rela{
			off: binary.LittleEndian.Uint64(data[off:]),
			typ: uint32(info),
			sym: uint32(info >> 32),
		}
		if typ == elf.SHT_RELA {
			r.addend = binary.LittleEndian.Uint64(data[off+16:])
		}
		fn(r)
	}
}
