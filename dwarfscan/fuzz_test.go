package dwarfscan

import (
	"encoding/binary"
	"io"
	"path/filepath"
	"testing"

	"bloop/structure"
)

// walkEverything uses every part of the API on d and fails if any loop
// makes no progress. Every entry and every line row takes at least one
// byte, which bounds the loops.
func walkEverything(t *testing.T, d *Data, infoLen, lineLen int) {
	r := d.Reader()
	var e Entry
	var rs []structure.Range
	for ui := range d.Units() {
		u := &d.Units()[ui]
		r.SeekUnit(ui)
		for n := 0; ; n++ {
			if n > infoLen {
				t.Fatalf("unit %d: more than %d entries", ui, infoLen)
			}
			err := r.Next(&e)
			if err != nil {
				if err != io.EOF && r.Next(&e) != err {
					t.Fatalf("error not sticky: %v", err)
				}
				break
			}
			rs, _ = d.Ranges(u, &e, rs[:0])
			if n%2 == 1 {
				r.SkipChildren()
			}
			for _, f := range e.Fields {
				if f.Class == ClassReference {
					r2 := d.Reader()
					if r2.Seek(f.Val) == nil {
						var e2 Entry
						_ = r2.Next(&e2)
					}
				}
			}
		}
		p, err := d.LineProgram(u)
		if err != nil || p == nil {
			continue
		}
		_, _ = p.FuncNameBase()
		var row LineRow
		for n := 0; p.Next(&row) == nil; n++ {
			if n > lineLen {
				t.Fatalf("unit %d: more than %d line rows", ui, lineLen)
			}
			_ = p.Files()
		}
	}
}

// FuzzEntries decodes arbitrary abbreviation and info bytes; the info
// bytes also serve as every other section, so that offsets into them
// lead somewhere.
func FuzzEntries(f *testing.F) {
	abbrev := abbrevTableBytes(
		abbr{1, TagCompileUnit, true, []spec{{AttrName, FormString, 0}, {AttrLowPC, FormAddr, 0}, {AttrRanges, FormSecOffset, 0}, {AttrStmtList, FormSecOffset, 0}}},
		abbr{2, TagSubprogram, true, []spec{{AttrSibling, FormRef4, 0}, {AttrName, FormStrp, 0}, {AttrHighPC, FormData4, 0}, {AttrDeclFile, FormImplicitConst, 3}}},
		abbr{3, TagVariable, false, []spec{{AttrName, FormIndirect, 0}, {AttrType, FormRefUdata, 0}, {AttrConstValue, FormData16, 0}}},
		abbr{4, TagInlinedSubroutine, false, []spec{{AttrRanges, FormRnglistx, 0}, {AttrLowPC, FormAddrx1, 0}, {AttrName, FormStrx2, 0}}},
	)
	var body wbuf
	body.u8(1)
	body.str("cu")
	body.u64(0x1000)
	body.u32(0)
	body.u32(0)
	body.u8(2)
	body.u32(40)
	body.u32(1)
	body.u32(0x10)
	body.u8(3)
	body.uleb(uint64(FormSdata))
	body.sleb(-7)
	body.uleb(11)
	body.bytes(make([]byte, 16))
	body.u8(0, 4, 0, 0, 0, 0, 0, 0)
	f.Add(abbrev, unitV4(4, body))
	f.Add(abbrev, unitV5(body))
	f.Add(abbrev, append(unitV4(2, body), unitV5(body)...))
	f.Add([]byte{1, 0x11, 1, 0, 0, 0}, []byte{0xff, 0xff, 0xff, 0xff, 12, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 1, 0, 0})
	f.Fuzz(func(t *testing.T, abbrev, info []byte) {
		s := Sections{Info: info, Abbrev: abbrev, Str: info, LineStr: info, Line: info, Ranges: info,
			RngLists: info, Addr: info, StrOffsets: info}
		d, err := New(s)
		if err != nil {
			return
		}
		walkEverything(t, d, len(info), len(info))
	})
}

// FuzzLine runs arbitrary line programs for a unit whose DW_AT_stmt_list
// is 0.
func FuzzLine(f *testing.F) {
	f.Add(lineProgramV4([]byte{0, 9, 2, 0, 0x10, 0, 0, 0, 0, 0, 0, 30, 40, 2, 5, 0, 12, 3, 'x', 0, 1, 0, 0, 4, 3, 1, 8, 3, 0x7f, 9, 1, 0, 0, 1, 1}))
	f.Add(lineProgramV4(nil))
	var v5 wbuf // a DWARF 5 header with line_strp and data forms
	v5.u32(0)
	v5.u16(5)
	v5.u8(8, 0)
	v5.u32(0)
	hdr := v5.off()
	v5.u8(1, 1, 1, 0xfb, 14, 13)
	v5.u8(0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1)
	v5.u8(1, 1, uint8(FormString)) // directories: path as string
	v5.uleb(2)
	v5.str("/d0")
	v5.str("d1")
	v5.u8(3, 1, uint8(FormLineStrp), 2, uint8(FormUdata), 5, uint8(FormData16))
	v5.uleb(1)
	v5.u32(0)
	v5.uleb(1)
	v5.bytes(make([]byte, 16))
	v5.patch32(hdr-4, v5.off()-hdr)
	v5.u8(0, 9, 2, 0, 0x10, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1)
	v5.patch32(0, v5.off()-4)
	f.Add([]byte(v5))
	var nv nvOps // NVIDIA's inlined-call extension (linenv.go)
	nv.setAddress(0x100)
	nv.advance(0, 9)
	nv.inlinedCall(1, 3)
	nv.advance(16, 1)
	nv.u8(0, 2, 0x91, 5)
	nv.end()
	base := uint32(2)
	f.Add(nvLineProgram(&base, nv.wbuf))
	for _, prog := range cubinLinePrograms() {
		f.Add(prog)
	}
	abbrev := abbrevTableBytes(abbr{1, TagCompileUnit, false, []spec{{AttrStmtList, FormSecOffset, 0}, {AttrCompDir, FormString, 0}}})
	var body wbuf
	body.u8(1)
	body.u32(0)
	body.str("/c")
	info := unitV4(4, body)
	f.Fuzz(func(t *testing.T, line []byte) {
		d, err := New(Sections{Info: info, Abbrev: abbrev, Line: line, LineStr: line, Str: line})
		if err != nil {
			t.Fatal(err)
		}
		walkEverything(t, d, len(info), len(line))
	})
}

// cubinLinePrograms are the line programs of the reference cubins that
// use NVIDIA's inlined-call extension (their header holds the
// function-name base), each on its own, as FuzzLine reads its input: the
// seeds of the extension as nvcc writes it. None when ../shared is absent.
func cubinLinePrograms() [][]byte {
	var bins []string
	for _, pat := range []string{"hpctoolkit-cuda/bin/*", "hpctoolkit-tests/bin/*-sm_*"} {
		m, _ := filepath.Glob(filepath.Join(cubinDir, pat))
		bins = append(bins, m...)
	}
	seen := map[string]bool{}
	var out [][]byte
	for _, bin := range bins {
		s, _, err := openELF(bin)
		if err != nil {
			continue
		}
		for off := 0; off+4 <= len(s.Line); {
			n := int(binary.LittleEndian.Uint32(s.Line[off:]))
			if n > len(s.Line)-off-4 {
				break
			}
			prog := s.Line[off : off+4+n]
			off += 4 + n
			if p := prog; !seen[string(p)] && hasNVBase(p) {
				seen[string(p)] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// hasNVBase reports whether a line program's header holds NVIDIA's
// function-name base.
func hasNVBase(prog []byte) bool {
	d, err := New(Sections{Line: prog})
	if err != nil {
		return false
	}
	p, err := d.LineProgram(&Unit{StmtList: 0, AddrSize: 8})
	if err != nil || p == nil {
		return false
	}
	_, ok := p.FuncNameBase()
	return ok
}
