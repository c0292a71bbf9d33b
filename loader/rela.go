package loader

import "encoding/binary"

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
func eachRela(data []byte, fn func(rela)) {
	for off := 0; off+24 <= len(data); off += 24 {
		info := binary.LittleEndian.Uint64(data[off+8:])
		fn(rela{
			off:    binary.LittleEndian.Uint64(data[off:]),
			typ:    uint32(info),
			sym:    uint32(info >> 32),
			addend: binary.LittleEndian.Uint64(data[off+16:]),
		})
	}
}
