package loader

import (
	"bloop/internal/testenv"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const cubins = "../../shared/hpctoolkit-tests/bin/"

// readCubin returns a cubin of the reference binaries, skipping the test
// when they are absent.
func readCubin(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(testenv.Shared(t, cubins+name))
	if err != nil {
		t.Fatal(err)
	}

	return b
}

// elfView parses a cubin with debug/elf, its e_version made 1, for the
// tests to find what to damage.
func elfView(t *testing.T, b []byte) *elf.File {
	t.Helper()
	c := append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(c[ehVersion:], 1)
	f, err := elf.NewFile(bytes.NewReader(c))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestCubinHeaders: NVIDIA's ELF variant opens whatever its e_version
// says, and damaged cubin headers give one line naming the file.
func TestCubinHeaders(t *testing.T) {
	good := readCubin(t, "inlines+loops-sm_62-nvcc102-dr")
	ef := elfView(t, good)
	mutant := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	u16 := func(off int, v uint16) func([]byte) {
		return func(b []byte) { binary.LittleEndian.PutUint16(b[off:], v) }
	}
	u32 := func(off int, v uint32) func([]byte) {
		return func(b []byte) { binary.LittleEndian.PutUint32(b[off:], v) }
	}
	rel := ef.Section(".rel.debug_line")
	symtab := ef.SectionByType(elf.SHT_SYMTAB)
	shdr := func(s *elf.Section) int {
		for i, x := range ef.Sections {
			if x == s {
				return int(binary.LittleEndian.Uint64(good[ehShoff:])) + i*64
			}
		}
		t.Fatalf("no section %s", s.Name)
		return 0
	}
	tests := []struct {
		name string
		b    []byte
		err  string // "" when it opens
		warn string // a warning it must give when it opens
	}{
		{name: "as nvcc wrote it (EV_CURRENT+101)", b: good},
		{name: "e_version 1", b: mutant(u32(ehVersion, 1))},
		{name: "e_version 0xffffffff", b: mutant(u32(ehVersion, 0xffffffff))},
		{name: "ident and machine only", b: good[:24], err: "truncated ELF header (24 of 64 bytes)"},
		{name: "header only", b: good[:ehSize], err: "bad cubin"},
		{name: "cut in half", b: good[:len(good)/2], err: "bad cubin"},
		{name: "32-bit", b: mutant(func(b []byte) { b[elf.EI_CLASS] = byte(elf.ELFCLASS32) }), err: "unsupported ELF"},
		{name: "no SM architecture", b: mutant(u32(ehFlags, 0)), err: "names no SM architecture"},
		{name: "section header size 0", b: mutant(u16(ehShentsize, 0)), err: "bad cubin"},
		{name: "section table past the end", b: mutant(u32(ehShoff, 0xfffffff0)), err: "bad cubin"},
		{name: "relocation past its section", b: mutant(u32(int(rel.Offset), 0xfffffff0)), warn: "relocations of debug sections not applied"},
		{name: "relocation of an unknown type", b: mutant(u32(int(rel.Offset)+8, 99)), warn: "relocations of debug sections not applied"},
		{name: "symbol table past the end", b: mutant(u32(shdr(symtab)+24, 0xfffffff0)), err: "bad cubin"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "cubin")
			if err := os.WriteFile(path, tc.b, 0o644); err != nil {
				t.Fatal(err)
			}
			img, err := Open(path, Options{Workers: 2})
			if tc.err != "" {
				if err == nil {
					t.Fatalf("opens; want an error saying %q", tc.err)
				}
				msg := err.Error()
				if !strings.HasPrefix(msg, path+": ") || !strings.Contains(msg, tc.err) || strings.Contains(msg, "\n") {
					t.Errorf("error %q: want one line naming the file and saying %q", msg, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if img.Arch != CUDA || img.InstSize != 8 {
				t.Errorf("arch %s, instructions of %d bytes; want cuda, 8", img.Arch, img.InstSize)
			}
			if len(img.Funcs) != 7 {
				t.Errorf("%d procedures, want 7", len(img.Funcs))
			}
			warned := tc.warn == ""
			for _, w := range img.Warnings {
				warned = warned || strings.Contains(w, tc.warn)
			}
			if !warned {
				t.Errorf("warnings %q do not say %q", img.Warnings, tc.warn)
			}
		})
	}
}

// TestCubinLayout checks the layout hpcstruct gives a cubin: every code
// section at its file offset, each kernel's symbol, line rows and DWARF
// moved with it.
func TestCubinLayout(t *testing.T) {
	for _, tc := range []struct {
		name string
		inst uint64
	}{
		{"inlines+loops-sm_62-nvcc102-0", 8},
		{"inlines+loops-sm_90a-nvcc120-0", 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ef := elfView(t, readCubin(t, tc.name))
			img, err := Open(cubins+tc.name, Options{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if img.Arch != CUDA || img.InstSize != tc.inst {
				t.Errorf("arch %s, instructions of %d bytes; want cuda, %d", img.Arch, img.InstSize, tc.inst)
			}
			if len(img.Warnings) > 0 {
				t.Errorf("warnings: %q", img.Warnings)
			}
			texts := 0
			for _, s := range ef.Sections {
				name, ok := strings.CutPrefix(s.Name, ".text.")
				if !ok {
					continue
				}
				texts++
				sec := img.SectionAt(s.Offset)
				if sec == nil || sec.Name != s.Name || sec.Addr != s.Offset {
					t.Errorf("%s: not laid out at its file offset %#x", s.Name, s.Offset)
				}
				fn := img.FuncAt(s.Offset)
				if fn == nil || fn.Name != name || fn.Addr != s.Offset || fn.End != s.Offset+s.Size {
					t.Errorf("%s: procedure %+v, want %s over [%#x, %#x)", s.Name, fn, name, s.Offset, s.Offset+s.Size)
					continue
				}
				sub := img.SubprogramAt(fn.Addr)
				if sub == nil || sub.EntryPC != fn.Addr {
					t.Errorf("%s: no DWARF procedure entered at %#x", name, fn.Addr)
				}
				if r, ok := img.Lines.Lookup(fn.Addr); !ok || r.Line == 0 {
					t.Errorf("%s: no line at its entry %#x", name, fn.Addr)
				}
			}
			if texts == 0 || len(img.Funcs) != texts {
				t.Errorf("%d procedures for %d .text sections", len(img.Funcs), texts)
			}
			if !img.HasInlineInfo() {
				t.Error("no inline records read")
			}
		})
	}
}

func TestOverlay(t *testing.T) {
	base := bytes.NewReader([]byte("0123456789"))
	o, dropped := newOverlay(base, []patch{{6, []byte("xy")}, {1, []byte("ab")}, {2, []byte("zz")}, {9, []byte("!?")}})
	if dropped != 1 {
		t.Errorf("dropped %d overlapping patches, want 1", dropped)
	}
	for _, tc := range []struct {
		off  int64
		n    int
		want string
	}{
		{0, 10, "0ab345xy8!"},
		{2, 5, "b345x"},
		{7, 3, "y8!"},
		{3, 2, "34"},
	} {
		b := make([]byte, tc.n)
		n, _ := o.ReadAt(b, tc.off)
		if got := string(b[:n]); got != tc.want {
			t.Errorf("ReadAt(%d, %d) = %q, want %q", tc.off, tc.n, got, tc.want)
		}
	}
}
