package loader

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// bigline's call line and line rows are past maxLine, from a #line
// directive.
const bigline = "testdata/corrupt/bigline-gcc12-O2"

// bigdecl's big_decl is declared past maxLine, from a #line directive.
const bigdecl = "testdata/corrupt/bigdecl-gcc12-O2"

// corpusImage is a binary of the test corpus, from the package directory.
func corpusImage(name string) string { return filepath.Join("..", "testdata", "bin", name) }

// patched is a binary's bytes with their layout, for a patch to find what
// to break.
type patched struct {
	t    *testing.T
	b    []byte
	f    *elf.File
	dies []*dwarf.Entry // non-null entries of .debug_info, read when first asked for
}

// section is the file offset and size of section name.
func (p *patched) section(name string) (off, size int) {
	s := p.f.Section(name)
	if s == nil {
		p.t.Fatalf("no section %s", name)
	}
	return int(s.Offset), int(s.Size)
}

// die is the first .debug_info entry for which ok holds, with the offset
// of the entry after it (where its bytes end, give or take null entries).
func (p *patched) die(ok func(*dwarf.Entry) bool) (e *dwarf.Entry, end dwarf.Offset) {
	if p.dies == nil {
		d, err := p.f.DWARF()
		if err != nil {
			p.t.Fatal(err)
		}
		for r := d.Reader(); ; {
			x, err := r.Next()
			if err != nil || x == nil {
				break
			}
			if x.Tag == dwarf.TagCompileUnit && x.Offset != 0xc {
				p.t.Fatalf("unit root at %#x: the patches expect one DWARF 5 unit at 0", x.Offset)
			}
			if x.Tag != 0 {
				p.dies = append(p.dies, x)
			}
		}
	}
	for i, x := range p.dies {
		if ok(x) {
			if i+1 < len(p.dies) {
				return x, p.dies[i+1].Offset
			}
			_, size := p.section(".debug_info")
			return x, dwarf.Offset(size)
		}
	}
	p.t.Fatal("no such entry")
	return nil, 0
}

// at is die for the entry at off.
func (p *patched) at(off dwarf.Offset) (*dwarf.Entry, dwarf.Offset) {
	return p.die(func(e *dwarf.Entry) bool { return e.Offset == off })
}

// setInDIE replaces the one occurrence of old in entry e's bytes by new.
func (p *patched) setInDIE(e *dwarf.Entry, end dwarf.Offset, old, new []byte) {
	info, _ := p.section(".debug_info")
	span := p.b[info+int(e.Offset) : info+int(end)]
	i := bytes.Index(span, old)
	if i < 0 || bytes.Contains(span[i+1:], old) {
		p.t.Fatalf("entry at %#x: % x not found once in % x", e.Offset, old, span)
	}
	copy(span[i:], new)
}

// setInLines replaces old by new at offset off of .debug_line, checking
// that old is there.
func (p *patched) setInLines(off int, old, new []byte) {
	sec, _ := p.section(".debug_line")
	at := p.b[sec+off:]
	if !bytes.HasPrefix(at, old) {
		p.t.Fatalf(".debug_line+%#x: % x, want % x", off, at[:len(old)], old)
	}
	copy(at, new)
}

// replaceAll replaces every occurrence of old in section name by new (of
// the same length), and fails when there is none.
func (p *patched) replaceAll(name string, old, new []byte) {
	sec, size := p.section(name)
	data := p.b[sec : sec+size]
	if !bytes.Contains(data, old) {
		p.t.Fatalf("%s: no % x", name, old)
	}
	copy(data, bytes.ReplaceAll(data, old, new))
}

// anyOffset, from a patch, is a place the test does not predict (which
// link of a chain the walk reaches first).
const anyOffset = ^uint64(0)

func le32(v uint32) []byte  { return binary.LittleEndian.AppendUint32(nil, v) }
func u64le(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func isInlined(e *dwarf.Entry) bool {
	return e.Tag == dwarf.TagInlinedSubroutine && e.Val(dwarf.AttrAbstractOrigin) != nil
}

// firstFDE is the .eh_frame offset of the first FDE, checking that its CIE
// encodes pc_begin as gcc does on x86-64 (pcrel sdata4: pc_range follows
// at +12).
func (p *patched) firstFDE() int {
	sec, size := p.section(".eh_frame")
	data := p.b[sec : sec+size]
	for off := 0; off+8 <= len(data); {
		n := int(binary.LittleEndian.Uint32(data[off:]))
		if id := binary.LittleEndian.Uint32(data[off+4:]); id != 0 {
			cie := off + 4 - int(id)
			if !bytes.HasPrefix(data[cie+9:], []byte("zR\x00")) || !bytes.Contains(data[cie+12:cie+4+int(binary.LittleEndian.Uint32(data[cie:]))], []byte{0x1b}) {
				p.t.Fatalf("CIE at %#x: not zR with pcrel sdata4", cie)
			}
			return off
		}
		off += 4 + n
	}
	p.t.Fatal("no FDE")
	return 0
}

// TestCorruptInput breaks one thing in a corpus binary and checks that
// loading counts that kind, in the section and at the offset of the
// broken data.
func TestCorruptInput(t *testing.T) {
	inline := corpusImage("inline-gcc12-O2")
	tests := []struct {
		name, bin string
		kind      string
		// patch breaks p and returns the section and offset to report.
		patch func(p *patched) (string, uint64)
	}{
		{"origin is itself", inline, CorruptDeclCycle, func(p *patched) (string, uint64) {
			e, end := p.die(isInlined)
			o := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
			p.setInDIE(e, end, le32(uint32(o)), le32(uint32(e.Offset)))
			return ".debug_info", uint64(e.Offset)
		}},
		{"origin's specification is the inlined call", corpusImage("tmpl-gcc12-O2"), CorruptDeclCycle, func(p *patched) (string, uint64) {
			// An inlined call X whose abstract origin A specifies a
			// declaration: A's specification becomes X.
			x, _ := p.die(func(e *dwarf.Entry) bool {
				if !isInlined(e) {
					return false
				}
				a, _ := p.at(e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset))
				return a.Val(dwarf.AttrSpecification) != nil
			})
			a, end := p.at(x.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset))
			d := a.Val(dwarf.AttrSpecification).(dwarf.Offset)
			p.setInDIE(a, end, le32(uint32(d)), le32(uint32(x.Offset)))
			return ".debug_info", uint64(x.Offset)
		}},
		{"chain too long", corpusImage("tmpl-gcc12-O2"), CorruptDeclDepth, func(p *patched) (string, uint64) {
			// Twice maxDeclDepth definitions, each made to refer to the
			// next: a chain with no cycle, longer than any compiler writes.
			ref := func(e *dwarf.Entry) (dwarf.Offset, bool) {
				for _, a := range []dwarf.Attr{dwarf.AttrSpecification, dwarf.AttrAbstractOrigin} {
					if o, ok := e.Val(a).(dwarf.Offset); ok {
						return o, true
					}
				}
				return 0, false
			}
			type link struct {
				e      *dwarf.Entry
				end, o dwarf.Offset
			}
			var chain []link
			p.die(func(e *dwarf.Entry) bool {
				if o, ok := ref(e); ok && e.Tag == dwarf.TagSubprogram {
					_, end := p.at(e.Offset)
					chain = append(chain, link{e, end, o})
				}
				return len(chain) == 2*maxDeclDepth
			})
			for i, l := range chain[:len(chain)-1] {
				p.setInDIE(l.e, l.end, le32(uint32(l.o)), le32(uint32(chain[i+1].e.Offset)))
			}
			return ".debug_info", anyOffset
		}},
		{"origin past the section", inline, CorruptBadRef, func(p *patched) (string, uint64) {
			e, end := p.die(isInlined)
			p.setInDIE(e, end, le32(uint32(e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset))), le32(0xfffff0))
			return ".debug_info", uint64(e.Offset)
		}},
		{"origin past the unit", inline, CorruptRefOutsideUnit, func(p *patched) (string, uint64) {
			e, end := p.die(isInlined)
			p.setInDIE(e, end, le32(uint32(e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset))), le32(0xfffff0))
			return ".debug_info", uint64(e.Offset)
		}},
		{"call line", bigline, CorruptCallLine, func(p *patched) (string, uint64) {
			e, _ := p.die(func(e *dwarf.Entry) bool { return e.Val(dwarf.AttrCallLine) == int64(200000000) })
			return ".debug_info", uint64(e.Offset)
		}},
		{"line", bigline, CorruptLine, func(p *patched) (string, uint64) {
			e, _ := p.die(func(e *dwarf.Entry) bool { return e.Tag == dwarf.TagCompileUnit })
			return ".debug_line", uint64(e.Val(dwarf.AttrStmtList).(int64))
		}},
		{"declaration line", bigdecl, CorruptDeclLine, func(p *patched) (string, uint64) {
			e, _ := p.die(func(e *dwarf.Entry) bool { return e.Val(dwarf.AttrDeclLine) == int64(300000000) })
			return ".debug_info", uint64(e.Offset)
		}},
		{"declaration file past the table", inline, CorruptFileIndex, func(p *patched) (string, uint64) {
			// Every abbreviation whose DW_AT_decl_file is the implicit
			// constant 1 gets file 63 (sleb 0x3f); the unit has 5 files.
			p.replaceAll(".debug_abbrev", []byte{0x3a, 0x21, 0x01}, []byte{0x3a, 0x21, 0x3f})
			return ".debug_info", anyOffset
		}},
		{"call file past the table", inline, CorruptFileIndex, func(p *patched) (string, uint64) {
			p.replaceAll(".debug_abbrev", []byte{0x58, 0x21, 0x01}, []byte{0x58, 0x21, 0x3f})
			return ".debug_info", anyOffset
		}},
		{"range list offset", inline, CorruptRangeList, func(p *patched) (string, uint64) {
			e, end := p.die(func(e *dwarf.Entry) bool { return isInlined(e) && e.Val(dwarf.AttrRanges) != nil })
			p.setInDIE(e, end, le32(uint32(e.Val(dwarf.AttrRanges).(int64))), le32(0x7ffffff0))
			return ".debug_info", uint64(e.Offset)
		}},
		{"range list entry of no kind", inline, CorruptRangeList, func(p *patched) (string, uint64) {
			// An inlined call's list begins with a DW_RLE_* kind (0-7);
			// 0x3f is none.
			e, _ := p.die(func(e *dwarf.Entry) bool { return isInlined(e) && e.Val(dwarf.AttrRanges) != nil })
			off := int(e.Val(dwarf.AttrRanges).(int64))
			sec, _ := p.section(".debug_rnglists")
			if p.b[sec+off] > 7 {
				p.t.Fatalf(".debug_rnglists+%#x: %#x is no DW_RLE_* kind", off, p.b[sec+off])
			}
			p.b[sec+off] = 0x3f
			return ".debug_rnglists", uint64(off)
		}},
		{"high_pc below low_pc", inline, CorruptRangeBackwards, func(p *patched) (string, uint64) {
			e, end := p.die(func(e *dwarf.Entry) bool {
				return e.Tag == dwarf.TagSubprogram && e.AttrField(dwarf.AttrHighpc) != nil && e.AttrField(dwarf.AttrHighpc).Class == dwarf.ClassConstant
			})
			p.setInDIE(e, end, u64le(uint64(e.Val(dwarf.AttrHighpc).(int64))), u64le(^uint64(0xff)))
			return ".debug_info", uint64(e.Offset)
		}},
		{"high_pc past the section", inline, CorruptRangePastSection, func(p *patched) (string, uint64) {
			e, end := p.die(func(e *dwarf.Entry) bool {
				return e.Tag == dwarf.TagSubprogram && e.AttrField(dwarf.AttrHighpc) != nil && e.AttrField(dwarf.AttrHighpc).Class == dwarf.ClassConstant
			})
			p.setInDIE(e, end, u64le(uint64(e.Val(dwarf.AttrHighpc).(int64))), u64le(1<<30))
			return ".debug_info", uint64(e.Offset)
		}},
		// loops-gcc12-O2 has one line program at 0, of two sequences:
		// 0x1280-0x1661 (end_sequence at 0x283), then 0x1060-0x1187
		// (set_address at 0x288).
		{"line address backwards", corpusImage("loops-gcc12-O2"), CorruptLineBackwards, func(p *patched) (string, uint64) {
			// Without the first end_sequence, the second sequence's
			// set_address moves its rows back.
			p.setInLines(0x283, []byte{0, 1, 1}, []byte{6, 6, 6}) // negate_stmt thrice
			return ".debug_line", 0
		}},
		{"line row past the section", corpusImage("loops-gcc12-O2"), CorruptLinePastSection, func(p *patched) (string, uint64) {
			// minimum_instruction_length 1 -> 64: every advance takes the
			// rows 64 times as far, out of .text.
			p.setInLines(12, []byte{1}, []byte{64})
			return ".debug_line", 0
		}},
		{"line row's file past the table", corpusImage("loops-gcc12-O2"), CorruptFileIndex, func(p *patched) (string, uint64) {
			// "set column 3" at 0x52, near the first sequence's start,
			// becomes "set file 63" (the program has 3 files).
			p.setInLines(0x52, []byte{5, 3}, []byte{4, 0x3f})
			return ".debug_line", 0
		}},
		{"line program cut short", corpusImage("loops-gcc12-O2"), CorruptLineProgram, func(p *patched) (string, uint64) {
			// unit_length ends the program 4 bytes into the second
			// sequence's set_address.
			_, size := p.section(".debug_line")
			p.setInLines(0, le32(uint32(size-4)), le32(0x28c-4))
			return ".debug_line", 0
		}},
		{"symbol size", corpusImage("loops-gcc12-O2"), CorruptSymbolSize, func(p *patched) (string, uint64) {
			syms, _ := p.f.Symbols()
			for i, s := range syms {
				if s.Name == "main" {
					at := uint64(i+1) * elf.Sym64Size
					symtab, _ := p.section(".symtab")
					binary.LittleEndian.PutUint64(p.b[symtab+int(at)+16:], 0x7fffffff) // st_size
					return ".symtab", at
				}
			}
			p.t.Fatal("no main")
			return "", 0
		}},
		{"FDE range past the section", corpusImage("loops-gcc12-O2"), CorruptFDERange, func(p *patched) (string, uint64) {
			fde := p.firstFDE()
			sec, _ := p.section(".eh_frame")
			binary.LittleEndian.PutUint32(p.b[sec+fde+12:], 0x7fffffff)
			return ".eh_frame", uint64(fde)
		}},
		{"FDE start outside the code", corpusImage("loops-gcc12-O2"), CorruptFDERange, func(p *patched) (string, uint64) {
			fde := p.firstFDE()
			sec, _ := p.section(".eh_frame")
			at := p.b[sec+fde+8:]
			binary.LittleEndian.PutUint32(at, binary.LittleEndian.Uint32(at)+0x40000000)
			return ".eh_frame", uint64(fde)
		}},
		{"FDE names no CIE", corpusImage("loops-gcc12-O2"), CorruptEHRecord, func(p *patched) (string, uint64) {
			fde := p.firstFDE()
			sec, _ := p.section(".eh_frame")
			binary.LittleEndian.PutUint32(p.b[sec+fde+4:], 2) // points inside the FDE's own length
			return ".eh_frame", uint64(fde)
		}},
		{"record past the section", corpusImage("loops-gcc12-O2"), CorruptEHRecord, func(p *patched) (string, uint64) {
			fde := p.firstFDE()
			sec, _ := p.section(".eh_frame")
			binary.LittleEndian.PutUint32(p.b[sec+fde:], 0x7ffffff0)
			return ".eh_frame", uint64(fde)
		}},
		{"LSDA that does not decode", corpusImage("stl-gcc12-O2"), CorruptLSDA, func(p *patched) (string, uint64) {
			// 0xff everywhere: no LPStart, no type table, and a
			// call-site table length whose ULEB128 never ends.
			sec, size := p.section(".gcc_except_table")
			copy(p.b[sec:sec+size], bytes.Repeat([]byte{0xff}, size))
			return ".eh_frame", anyOffset
		}},
		{"landing pad outside the code", corpusImage("stl-gcc12-O2"), CorruptLSDA, func(p *patched) (string, uint64) {
			// The first LSDA's first landing pad of two ULEB128 bytes
			// becomes 0x3fff, past the end of the 12 KiB of code.
			sec, size := p.section(".gcc_except_table")
			r := &ehReader{b: p.b[sec : sec+size]}
			if r.u8() != 0xff {
				p.t.Fatal("first LSDA has an LPStart")
			}
			if r.u8() != 0xff {
				r.uleb() // type table offset
			}
			if r.u8() != 0x01 {
				p.t.Fatal("first LSDA's call sites are not ULEB128")
			}
			end := int(r.uleb()) + r.off
			for r.off < end {
				r.uleb()
				r.uleb()
				at := r.off
				if lp := r.uleb(); lp != 0 && r.off-at == 2 {
					copy(r.b[at:], []byte{0xff, 0x7f})
					return ".eh_frame", anyOffset
				}
				r.uleb()
			}
			p.t.Fatal("no landing pad of two bytes in the first LSDA")
			return "", 0
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := os.ReadFile(tc.bin)
			if err != nil {
				t.Fatal(err)
			}
			f, err := elf.NewFile(bytes.NewReader(bytes.Clone(b)))
			if err != nil {
				t.Fatal(err)
			}
			sec, off := tc.patch(&patched{t: t, b: b, f: f})
			path := filepath.Join(t.TempDir(), filepath.Base(tc.bin))
			if err := os.WriteFile(path, b, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, workers := range []int{1, 2} {
				img := openWorkers(t, path, workers)
				c, ok := findCorrupt(img, tc.kind, sec)
				switch {
				case !ok:
					t.Errorf("-j%d: no %q in %s among %+v", workers, tc.kind, sec, img.Corrupt)
				case off != anyOffset && c.Offset != off || c.Count < 1 || c.File != "":
					t.Errorf("-j%d: %+v, want the first at %#x", workers, c, off)
				}
			}
		})
	}
}

// TestNoCorruptionInCompilerOutput: what compilers and linkers write is
// not corrupt, however odd (discarded code at 0, overlapping sequences).
// A report there would be a false alarm.
func TestNoCorruptionInCompilerOutput(t *testing.T) {
	var bins []string
	for _, pat := range []string{"../testdata/bin/*", "../testdata/bin-arm64/*", "../testdata/bin-ppc64le/*",
		"../../shared/hpcstruct-refs/bin/*", "../../shared/hpcstruct-refs-arch/bin/*"} {
		m, _ := filepath.Glob(pat)
		bins = append(bins, m...)
	}
	if len(bins) == 0 {
		t.Fatal("no corpus")
	}
	n := 0
	for _, bin := range bins {
		img, err := Open(bin, Options{})
		if err != nil {
			continue // SHA256SUMS and the like
		}
		n++
		if len(img.Corrupt) > 0 {
			t.Errorf("%s: %+v", bin, img.Corrupt)
		}
	}
	if n < 100 {
		t.Errorf("only %d images read", n)
	}
}

// TestCorruptTally: counts add up and the first offset is the lowest,
// whatever order the places were found in.
func TestCorruptTally(t *testing.T) {
	var a, b tally
	a.add(CorruptLine, ".debug_line", 0x40)
	a.add(CorruptCallLine, ".debug_info", 0x30)
	b.add(CorruptLine, ".debug_line", 0x10)
	b.add(CorruptLine, ".debug_line", 0x20)
	a.merge(b)
	got := a.sorted()
	want := []Corruption{
		{Kind: CorruptCallLine, Section: ".debug_info", Offset: 0x30, Count: 1},
		{Kind: CorruptLine, Section: ".debug_line", Offset: 0x10, Count: 3},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// openWorkers opens path with that many workers.
func openWorkers(t *testing.T, path string, workers int) *Image {
	t.Helper()
	img, err := Open(path, Options{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// findCorrupt is img's report of corrupt data of kind in section sec.
func findCorrupt(img *Image, kind, sec string) (Corruption, bool) {
	for _, c := range img.Corrupt {
		if c.Kind == kind && c.Section == sec {
			return c, true
		}
	}
	return Corruption{}, false
}
