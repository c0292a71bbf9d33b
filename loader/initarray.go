package loader

import (
	"debug/elf"
	"encoding/binary"
	"sort"
)

// maxInitArray bounds the constructor tables read (a corrupt size must not
// make bloop read or allocate much): real ones hold a few dozen pointers.
const maxInitArray = 1 << 20

// relativeType is each machine's R_*_RELATIVE relocation: the slot gets
// the load base plus the addend, so the addend is the link-time address.
var relativeType = map[elf.Machine]uint32{
	elf.EM_X86_64:  uint32(elf.R_X86_64_RELATIVE),
	elf.EM_AARCH64: uint32(elf.R_AARCH64_RELATIVE),
	elf.EM_PPC64:   uint32(elf.R_PPC64_RELATIVE),
}

// initFuncs returns the code addresses in .preinit_array, .init_array and
// .fini_array: constructors and destructors, which a stripped file names
// nowhere else. In a position-independent file a slot's address is the
// addend of its R_*_RELATIVE relocation (the slot's own bytes may be 0);
// otherwise, and with RELR relocations, the slot holds it.
func (img *Image) initFuncs(f *elf.File, raw fileBytes) []uint64 {
	var arrays []*elf.Section
	for _, s := range f.Sections {
		switch s.Type {
		case elf.SHT_INIT_ARRAY, elf.SHT_FINI_ARRAY, elf.SHT_PREINIT_ARRAY:
			if s.Size > 0 && s.Size <= maxInitArray {
				arrays = append(arrays, s)
			}
		}
	}
	if len(arrays) == 0 {
		return nil
	}
	slots := map[uint64]uint64{} // slot address -> the address it holds
	for _, s := range arrays {
		data, err := sectionBytes(raw, s)
		if err != nil {
			continue
		}
		for off := 0; off+8 <= len(data); off += 8 {
			slots[s.Addr+uint64(off)] = binary.LittleEndian.Uint64(data[off:])
		}
	}
	if rel, ok := relativeType[f.Machine]; ok {
		for _, s := range f.Sections {
			if s.Type != elf.SHT_RELA || s.Flags&elf.SHF_ALLOC == 0 {
				continue
			}
			data, err := sectionBytes(raw, s)
			if err != nil {
				continue
			}
			eachRela(data, func(r rela) {
				if _, ok := slots[r.off]; ok && r.typ == rel {
					slots[r.off] = r.addend
				}
			})
		}
	}
	var out []uint64
	for _, a := range slots {
		if img.IsCode(a) {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return uniqAddrs(out)
}

// uniqAddrs drops repeated addresses from a sorted slice, in place.
func uniqAddrs(s []uint64) []uint64 {
	out := s[:0]
	for i, a := range s {
		if i == 0 || a != s[i-1] {
			out = append(out, a)
		}
	}
	return out
}
