package loader

import (
	"bytes"
	"cmp"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"

	"bloop/dwarfscan"
	"bloop/par"
)

// sectionBytes returns what section s holds, decompressed. debug/elf's
// Section.Data grows its result in 10 MB chunks, which for libjvm's 257 MB
// .debug_info cost three times the inflation itself; here each section is
// read with one call into a buffer of its final size.
func sectionBytes(file io.ReaderAt, s *elf.Section) ([]byte, error) {
	if s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	if s.FileSize > maxSectionSize {
		return nil, fmt.Errorf("section %s claims %d bytes", s.Name, s.FileSize)
	}
	raw := make([]byte, s.FileSize)
	// Section.ReadAt is nil for compressed sections: read the file itself.
	if n, err := file.ReadAt(raw, int64(s.Offset)); n != len(raw) {
		return nil, fmt.Errorf("section %s truncated (%d of %d bytes): %w", s.Name, n, len(raw), err)
	}
	switch {
	case s.Flags&elf.SHF_COMPRESSED != 0:
		// Elf64_Chdr: type, reserved, size, alignment.
		if len(raw) < 24 {
			return nil, fmt.Errorf("section %s: compression header truncated", s.Name)
		}
		typ := elf.CompressionType(binary.LittleEndian.Uint32(raw))
		size := binary.LittleEndian.Uint64(raw[8:])
		if typ != elf.COMPRESS_ZLIB {
			// zstd: the standard library's decoder is internal to debug/elf.
			return s.Data()
		}
		return inflate(s.Name, raw[24:], size)
	case strings.HasPrefix(s.Name, ".zdebug_") && len(raw) >= 12 && string(raw[:4]) == "ZLIB":
		// The GNU format before SHF_COMPRESSED: "ZLIB", then the size, big-endian.
		return inflate(s.Name, raw[12:], binary.BigEndian.Uint64(raw[4:]))
	}
	return raw, nil
}

func inflate(name string, z []byte, size uint64) ([]byte, error) {
	if size > maxSectionSize {
		return nil, fmt.Errorf("section %s claims %d bytes uncompressed", name, size)
	}
	zr, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, fmt.Errorf("section %s: %w", name, err)
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil, fmt.Errorf("section %s: inflating %d bytes: %w", name, size, err)
	}
	return out, nil
}

// debugSections are the DWARF sections bloop reads, by their name after
// ".debug_". Location lists, frames and type units are not among them:
// on libjvm .debug_loclists alone is 51 MB.
var debugSections = []string{"info", "abbrev", "str", "line_str", "line", "ranges", "rnglists", "addr", "str_offsets"}

// readDebugSections reads and decompresses f's DWARF sections, up to
// workers at a time, largest first so the longest inflation starts at once.
func readDebugSections(f *elf.File, file io.ReaderAt, workers int) (map[string][]byte, error) {
	type job struct {
		name string
		s    *elf.Section
	}
	var jobs []job
	for _, s := range f.Sections {
		name, ok := strings.CutPrefix(s.Name, ".debug_")
		if !ok {
			name, ok = strings.CutPrefix(s.Name, ".zdebug_")
		}
		if !ok {
			continue
		}
		for _, want := range debugSections {
			if name == want {
				jobs = append(jobs, job{name, s})
			}
		}
	}
	slices.SortStableFunc(jobs, func(a, b job) int { return cmp.Compare(b.s.FileSize, a.s.FileSize) })
	out := make([][]byte, len(jobs))
	errs := make([]error, len(jobs))
	par.For(workers, len(jobs), func(i int) {
		out[i], errs[i] = sectionBytes(file, jobs[i].s)
	})
	m := map[string][]byte{}
	for i, j := range jobs {
		if errs[i] != nil {
			return nil, errs[i]
		}
		m[j.name] = out[i]
	}
	return m, nil
}

// openDWARF reads f's DWARF sections and parses their unit headers.
// Relocations are not applied: bloop reads executables and shared
// objects, whose debug sections are final (debug/elf applies them only to
// relocatable files too).
func openDWARF(f *elf.File, file io.ReaderAt, workers int) (*dwarfscan.Data, error) {
	secs, err := readDebugSections(f, file, workers)
	if err != nil {
		return nil, err
	}
	return dwarfscan.New(dwarfscan.Sections{
		Info: secs["info"], Abbrev: secs["abbrev"], Str: secs["str"], LineStr: secs["line_str"],
		Line: secs["line"], Ranges: secs["ranges"], RngLists: secs["rnglists"], Addr: secs["addr"],
		StrOffsets: secs["str_offsets"],
	})
}
