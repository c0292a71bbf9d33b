package loader

import (
	"debug/elf"
	"strings"
)

// elfFacts are the parts of an ELF file that tell an executable from a
// shared library, as elfutils' elfclassify reads them (and Dyninst 12.3,
// whose Object::isOnlyExecutable and isExecutable follow it).
type elfFacts struct {
	typ       elf.Type
	loadable  bool // a PT_LOAD segment, and no sections or an allocated one with bits
	dynamic   bool // a PT_DYNAMIC segment
	pie       bool // DF_1_PIE in DT_FLAGS_1
	soname    string
	interp    bool // PT_INTERP
	debug     bool // DT_DEBUG, which only the dynamic linker of a program fills
	entry     uint64
	textLo    uint64 // .text's extent; 0, 0 without one
	textHi    uint64
	sectioned bool // the file has section headers
}

// onlySharedLibrary is elfclassify's is_shared: a file that can only be a
// shared library. A soname decides before an interpreter does, so libc.so.6,
// which can also be run, counts as a library.
func (c elfFacts) onlySharedLibrary() bool {
	switch {
	case !c.loadable, c.typ == elf.ET_EXEC, !c.dynamic, c.pie:
		return false
	case c.soname != "":
		return true
	case c.interp, c.debug:
		return false
	}
	return true
}

// onlyExecutable is elfclassify's is_executable: loadable and not only a
// shared library. Dyninst's Symtab::isExec() is this, and hpcstruct adds
// the "[module]" suffix to procedure names where it is false.
func (c elfFacts) onlyExecutable() bool {
	return c.loadable && !c.onlySharedLibrary()
}

// program is Dyninst's Object::isExecutable (elfclassify's is_program plus
// an entry point inside .text past its start): ParseAPI starts a function
// "_start" at the entry point of such a file when no symbol is there.
func (c elfFacts) program() bool {
	switch {
	case !c.loadable:
		return false
	case c.typ == elf.ET_EXEC, c.pie, c.interp, c.debug:
		return true
	case c.entry == c.textLo:
		// ld.so's entry is where its .text begins.
		return strings.HasPrefix(c.soname, "ld-linux")
	case c.entry > c.textLo && c.entry < c.textHi:
		// The default linker script puts the entry of a library that is
		// no program at 0 or .text's start; vdso32's points elsewhere.
		return c.soname != "linux-gate.so.1"
	}
	return false
}

// readELFFacts gathers f's elfFacts.
func readELFFacts(f *elf.File) elfFacts {
	c := elfFacts{typ: f.Type, entry: f.Entry, sectioned: len(f.Sections) > 0}
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_LOAD:
			c.loadable = f.Type == elf.ET_EXEC || f.Type == elf.ET_DYN
		case elf.PT_DYNAMIC:
			c.dynamic = true
		case elf.PT_INTERP:
			c.interp = true
		}
	}
	if c.loadable && c.sectioned {
		c.loadable = hasAllocBits(f)
	}
	if vals, err := f.DynValue(elf.DT_FLAGS_1); err == nil {
		for _, v := range vals {
			c.pie = c.pie || v&uint64(elf.DF_1_PIE) != 0
		}
	}
	if vals, err := f.DynValue(elf.DT_DEBUG); err == nil && len(vals) > 0 {
		c.debug = true
	}
	if names, err := f.DynString(elf.DT_SONAME); err == nil && len(names) > 0 {
		c.soname = names[0]
	}
	if s := f.Section(".text"); s != nil {
		c.textLo, c.textHi = s.Addr, s.Addr+s.Size
	}
	return c
}

func hasAllocBits(f *elf.File) bool {
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS {
			return true
		}
	}
	return false
}
