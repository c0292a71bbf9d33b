package inputs

import (
	"debug/elf"
	"strings"

	"bloop/loader"
)

// Weights of EstimateCost, in cost units per byte. Analysis time follows
// the code to disassemble (a correlation of 0.99 with its bytes over 50
// Debian libraries of 0.4-40 MB); DWARF adds about a tenth as much per
// byte (libgsl's 8.1 MB of DWARF added 0.3 s to the 1.4-2.3 s its
// 1.9 MB of code took). See docs/cache.md.
const (
	codeWeight  = 10
	dwarfWeight = 1
	// measurementsCost stands for a measurement directory, whose modules
	// are not known before its profiles are read: as a library of 1 MB of
	// code.
	measurementsCost = codeWeight << 20
)

// EstimateCost is what PlanCost deals an input by: its executable
// sections' bytes and its DWARF's (the separate debug file's when the
// binary has none and the loader would find one on this machine, under
// debugDirs or /usr/lib/debug; never fetched), weighted. It reads
// section headers only. A file that is not an ELF file bloop reads costs
// its size (the run refuses it quickly, but the size is all there is to
// go by).
func EstimateCost(in Input, debugDirs []string) int64 {
	if in.Kind == Measurements {
		return measurementsCost
	}
	code, dwarf, ok := sectionBytes(in.Path)
	if !ok {
		return max(in.Size, 0)
	}
	if dwarf == 0 {
		if dbg, err := loader.DebugFileOf(in.Path, debugDirs); err == nil && dbg != "" {
			_, dwarf, _ = sectionBytes(dbg)
		}
	}
	return codeWeight*code + dwarfWeight*dwarf
}

// sectionBytes sums the sizes of the file's executable sections and of
// its DWARF sections (uncompressed sizes where compressed).
func sectionBytes(path string) (code, dwarf int64, ok bool) {
	defer func() {
		if recover() != nil {
			code, dwarf, ok = 0, 0, false
		}
	}()
	f, err := elf.Open(path)
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS {
			continue
		}
		switch {
		case s.Flags&elf.SHF_EXECINSTR != 0:
			code += int64(s.Size)
		case strings.HasPrefix(s.Name, ".debug_") || strings.HasPrefix(s.Name, ".zdebug_"):
			dwarf += int64(s.Size)
		}
	}
	return code, dwarf, true
}
