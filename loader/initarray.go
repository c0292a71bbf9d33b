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
// nowhere else, and _init and _fini, which .dynamic names (DT_INIT,
// DT_FINI): on aarch64 they begin with a nop, which inference takes for
// padding. The tables are found by their section types and by .dynamic's
// DT_*_ARRAY and DT_*_ARRAYSZ, for a file whose section types were
// changed. In a position-independent file a slot's address is the addend
// of its R_*_RELATIVE relocation (the slot's own bytes may be 0);
// otherwise, and with RELR relocations, the slot holds it.
func (img *Image) initFuncs(f *elf.File, raw fileBytes) []uint64 {
	out := dynFuncs(f)
	type table struct {
		sec    *elf.Section
		lo, hi uint64 // the slots' addresses, in sec
	}
	var arrays []table
	for _, s := range f.Sections {
		switch s.Type {
		case elf.SHT_INIT_ARRAY, elf.SHT_FINI_ARRAY, elf.SHT_PREINIT_ARRAY:
			if s.Size > 0 && s.Size <= maxInitArray {
				arrays = append(arrays, table{s, s.Addr, s.Addr + s.Size})
			}
		}
	}
	for _, t := range [][2]elf.DynTag{{elf.DT_INIT_ARRAY, elf.DT_INIT_ARRAYSZ}, {elf.DT_FINI_ARRAY, elf.DT_FINI_ARRAYSZ}, {elf.DT_PREINIT_ARRAY, elf.DT_PREINIT_ARRAYSZ}} {
		a, n := dynValue(f, t[0]), dynValue(f, t[1])
		if a == 0 || n == 0 || n > maxInitArray {
			continue
		}
		for _, s := range f.Sections {
			if s.Type != elf.SHT_NOBITS && s.Flags&elf.SHF_ALLOC != 0 && s.Addr <= a && a+n <= s.Addr+s.Size {
				arrays = append(arrays, table{s, a, a + n})
				break
			}
		}
	}
	if len(arrays) == 0 {
		return img.uniqCode(out)
	}
	slots := map[uint64]uint64{} // slot address -> the address it holds
	for _, t := range arrays {
		data, err := sectionBytes(raw, t.sec)
		if err != nil {
			continue
		}
		for a := t.lo; a+8 <= t.hi && a+8-t.sec.Addr <= uint64(len(data)); a += 8 {
			slots[a] = binary.LittleEndian.Uint64(data[a-t.sec.Addr:])
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
	for _, a := range slots {
		out = append(out, a)
	}
	return img.uniqCode(out)
}

// dynFuncs returns the addresses of _init and _fini that .dynamic holds.
func dynFuncs(f *elf.File) []uint64 {
	var out []uint64
	for _, t := range []elf.DynTag{elf.DT_INIT, elf.DT_FINI} {
		if a := dynValue(f, t); a != 0 {
			out = append(out, a)
		}
	}
	return out
}

// dynValue is the value of .dynamic's first entry tagged t, 0 when there
// is none or .dynamic cannot be read.
func dynValue(f *elf.File, t elf.DynTag) uint64 {
	if v, err := f.DynValue(t); err == nil && len(v) > 0 {
		return v[0]
	}
	return 0
}

// uniqCode sorts s and drops repeated addresses and those of no code
// section, in place.
func (img *Image) uniqCode(s []uint64) []uint64 {
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	out := s[:0]
	for _, a := range uniqAddrs(s) {
		if img.IsCode(a) {
			out = append(out, a)
		}
	}
	return out
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
