package dwarfscan

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// openELF reads the DWARF sections of an ELF file, decompressed by
// debug/elf, so that debug/dwarf and dwarfscan read the very same bytes.
// reason is set for files the differential test cannot use. NVIDIA's cubins
// carry a non-standard e_version that debug/elf refuses, so it is patched
// in memory.
func openELF(path string) (s Sections, reason string, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return s, "", err
	}
	if len(raw) < 24 || !bytes.HasPrefix(raw, []byte(elf.ELFMAG)) {
		return s, "not ELF", nil
	}
	if raw[elf.EI_DATA] == byte(elf.ELFDATA2LSB) && binary.LittleEndian.Uint32(raw[20:]) != 1 {
		binary.LittleEndian.PutUint32(raw[20:], 1)
	}
	f, err := elf.NewFile(bytes.NewReader(raw))
	if err != nil {
		return s, "", err
	}
	if f.Type == elf.ET_REL {
		return s, "ET_REL: debug/elf applies relocations the raw sections lack", nil
	}
	for _, sec := range f.Sections {
		if strings.HasPrefix(sec.Name, ".zdebug_") {
			return s, "old-style .zdebug sections", nil
		}
	}
	get := func(name string) []byte {
		sec := f.Section(name)
		if sec == nil || sec.Type == elf.SHT_NOBITS {
			return nil
		}
		b, e := sec.Data()
		if e != nil && err == nil {
			err = fmt.Errorf("%s %s: %w", path, name, e)
		}
		return b
	}
	s = Sections{
		Info: get(".debug_info"), Abbrev: get(".debug_abbrev"), Str: get(".debug_str"),
		LineStr: get(".debug_line_str"), Line: get(".debug_line"), Ranges: get(".debug_ranges"),
		RngLists: get(".debug_rnglists"), Addr: get(".debug_addr"), StrOffsets: get(".debug_str_offsets"),
	}
	if err != nil {
		return s, "", err
	}
	if len(s.Info) == 0 {
		return s, "no .debug_info", nil
	}
	return s, "", nil
}

// stdDWARF builds debug/dwarf's reader over the same section bytes.
func stdDWARF(s Sections) (*dwarf.Data, error) {
	d, err := dwarf.New(s.Abbrev, nil, nil, s.Info, s.Line, nil, s.Ranges, s.Str)
	if err != nil {
		return nil, err
	}
	for name, b := range map[string][]byte{".debug_addr": s.Addr, ".debug_line_str": s.LineStr,
		".debug_str_offsets": s.StrOffsets, ".debug_rnglists": s.RngLists} {
		if b != nil {
			if err := d.AddSection(name, b); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

// debugFileByBuildID finds the separate debug file of an ELF file under
// /usr/lib/debug/.build-id from its GNU build-id note.
func debugFileByBuildID(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sec := f.Section(".note.gnu.build-id")
	if sec == nil {
		return ""
	}
	b, err := sec.Data()
	if err != nil || len(b) < 16 {
		return ""
	}
	namesz, descsz := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
	descOff := 12 + (int(namesz)+3)&^3
	if descsz < 2 || descOff+int(descsz) > len(b) {
		return ""
	}
	id := hex.EncodeToString(b[descOff : descOff+int(descsz)])
	return filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug")
}

// corpus lists the files of the differential test: the small test
// binaries always, the large system libraries unless -short.
func corpus(t testing.TB) []string {
	var files []string
	for _, dir := range []string{"../testdata/bin", "../../shared/hpctoolkit-tests/bin", "../../shared/hpcstruct-refs/bin"} {
		m, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, p := range m {
			base := filepath.Base(p)
			if strings.HasSuffix(base, ".license") || base == "SHA256SUMS" {
				continue
			}
			files = append(files, p)
		}
	}
	if len(files) == 0 {
		t.Fatal("no test binaries")

	}
	if !testing.Short() {
		for _, p := range []string{"/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30",
			debugFileByBuildID("/usr/lib/x86_64-linux-gnu/libgsl.so.27")} {
			if _, err := os.Stat(p); p != "" && err == nil {
				files = append(files, p)
			} else {
				t.Logf("large file %q absent", p)
			}
		}
	}
	return files
}
