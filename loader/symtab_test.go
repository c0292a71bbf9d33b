package loader

import (
	"debug/elf"
	"path/filepath"
	"testing"
)

// TestSymbolTable: symbolTable decodes what debug/elf's Symbols and
// DynamicSymbols do (but the version fields), on the committed binaries
// of every architecture, the corrupt ones, and the system's libc with
// its debug file when installed.
func TestSymbolTable(t *testing.T) {
	var files []string
	for _, pat := range []string{"../testdata/bin/*", "../testdata/bin-arm64/*", "../testdata/bin-ppc64le/*", "testdata/corrupt/*"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	files = append(files, "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6")
	if d, _ := filepath.Glob("/usr/lib/debug/.build-id/*/*.debug"); len(d) > 0 {
		files = append(files, d[0])
	}
	tables := 0
	for _, path := range files {
		f, err := elf.Open(path)
		if err != nil {
			continue // sources, checksums, a file not installed
		}
		for _, typ := range []elf.SectionType{elf.SHT_SYMTAB, elf.SHT_DYNSYM} {
			want, werr := f.Symbols()
			if typ == elf.SHT_DYNSYM {
				want, werr = f.DynamicSymbols()
			}
			got, gerr := symbolTable(f, typ)
			if (werr == nil) != (gerr == nil) {
				t.Errorf("%s %v: error %v, debug/elf's %v", path, typ, gerr, werr)
				continue
			}
			if werr != nil {
				continue
			}
			tables++
			if len(got) != len(want) {
				t.Errorf("%s %v: %d symbols, debug/elf %d", path, typ, len(got), len(want))
				continue
			}
			for i := range want {
				w := want[i]
				w.Version, w.Library, w.VersionIndex, w.HasVersion = "", "", 0, false
				if got[i] != w {
					t.Errorf("%s %v symbol %d: %+v, debug/elf %+v", path, typ, i+1, got[i], w)
					break
				}
			}
		}
		f.Close()
	}
	if tables < 10 {
		t.Fatalf("only %d symbol tables compared", tables)
	}
}

// TestSymbolTableBad: a table whose string link is out of range, a name
// offset past the string table, and a name running to its end
// unterminated, as debug/elf reads them.
func TestSymbolTableBad(t *testing.T) {
	for _, c := range []struct {
		strs string
		off  uint32
		want string
	}{
		{"\x00main\x00", 1, "main"},
		{"\x00main\x00", 0, ""},
		{"\x00main\x00", 6, ""},
		{"\x00main\x00", 1 << 31, ""},
		{"\x00main", 1, ""}, // unterminated
		{"", 0, ""},
	} {
		if got := cString(c.strs, c.off); got != c.want {
			t.Errorf("cString(%q, %d) = %q, want %q", c.strs, c.off, got, c.want)
		}
	}
	f, err := elf.Open("../testdata/bin/hot-gcc12-O2")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sec := f.SectionByType(elf.SHT_SYMTAB)
	if sec == nil {
		t.Skip("no .symtab")
	}
	sec.Link = uint32(len(f.Sections)) // out of range
	if _, err := symbolTable(f, elf.SHT_SYMTAB); err == nil {
		t.Errorf("string table link out of range: no error")
	}
}
