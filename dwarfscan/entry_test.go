package dwarfscan

import (
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"testing"
	"unsafe"
)

// prefixUnit is a DWARF 4 unit holding only a null entry, put before the
// unit under test so that unit-relative references must be rebased.
var prefixUnit = unitV4(4, []byte{0})

func readAll(t *testing.T, d *Data, ui int) []Entry {
	t.Helper()
	r := d.Reader()
	r.SeekUnit(ui)
	var out []Entry
	for {
		var e Entry
		err := r.Next(&e)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		for i := range e.Fields {
			e.read(i) // strings are read when asked for
		}
		e.d, e.u, e.lazy = nil, nil, 0 // compare what was decoded
		out = append(out, e)
	}
}

// TestForms decodes one entry per case and checks every field; cases that
// debug/dwarf understands are also compared with it.
func TestForms(t *testing.T) {
	str := []byte("\x00hello\x00world\x00")
	var strOffsets wbuf // DWARF 5 header, then offsets of "hello" and "world"
	strOffsets.u32(4 + 8)
	strOffsets.u16(5)
	strOffsets.u16(0)
	strOffsets.u32(1)
	strOffsets.u32(7)
	var addr wbuf // DWARF 5 header, then two addresses
	addr.u32(4 + 16)
	addr.u16(5)
	addr.u8(8, 0)
	addr.u64(0xdead)
	addr.u64(0xbeef)
	d16 := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	base := uint64(len(prefixUnit))
	neg := func(v int64) uint64 { return uint64(v) }
	cases := []struct {
		name    string
		version uint16
		specs   []spec
		value   func(w *wbuf)
		want    []Field
		std     bool // compare with debug/dwarf too
	}{
		{"indirect", 4,
			[]spec{{AttrName, FormIndirect, 0}, {AttrLanguage, FormIndirect, 0}, {AttrDeclLine, FormIndirect, 0}},
			func(w *wbuf) {
				w.uleb(uint64(FormString))
				w.str("a.c")
				w.uleb(uint64(FormData1))
				w.u8(12)
				w.uleb(uint64(FormSdata))
				w.sleb(-2)
			},
			[]Field{{AttrName, FormString, ClassString, 0, "a.c"}, {AttrLanguage, FormData1, ClassConstant, 12, ""},
				{AttrDeclLine, FormSdata, ClassConstant, neg(-2), ""}}, true},
		{"implicit_const", 5,
			[]spec{{AttrCallFile, FormImplicitConst, 3}, {AttrDeclLine, FormImplicitConst, -5}, {AttrName, FormStrp, 0}},
			func(w *wbuf) { w.u32(1) },
			[]Field{{AttrCallFile, FormImplicitConst, ClassConstant, 3, ""},
				{AttrDeclLine, FormImplicitConst, ClassConstant, neg(-5), ""}, {AttrName, FormStrp, ClassString, 1, "hello"}}, true},
		{"data16", 5,
			[]spec{{AttrConstValue, FormData16, 0}, {AttrByteSize, FormData2, 0}},
			func(w *wbuf) { w.bytes(d16); w.u16(0x1234) },
			[]Field{{AttrConstValue, FormData16, ClassConstant, binary.LittleEndian.Uint64(d16), string(d16)},
				{AttrByteSize, FormData2, ClassConstant, 0x1234, ""}}, true},
		{"flags and references", 4,
			[]spec{{AttrExternal, FormFlag, 0}, {AttrDeclaration, FormFlagPresent, 0}, {AttrType, FormRef4, 0},
				{AttrSpecification, FormRefUdata, 0}, {AttrAbstractOrigin, FormRefAddr, 0}, {AttrSignature, FormRefSig8, 0},
				{AttrContainingType, FormRef1, 0}},
			func(w *wbuf) {
				w.u8(1)
				w.u32(0x20)
				w.uleb(0x21)
				w.u32(0x30)
				w.u64(0x1122334455667788)
				w.u8(0x22)
			},
			[]Field{{AttrExternal, FormFlag, ClassFlag, 1, ""}, {AttrDeclaration, FormFlagPresent, ClassFlag, 1, ""},
				{AttrType, FormRef4, ClassReference, base + 0x20, ""}, {AttrSpecification, FormRefUdata, ClassReference, base + 0x21, ""},
				{AttrAbstractOrigin, FormRefAddr, ClassReference, 0x30, ""},
				{AttrSignature, FormRefSig8, ClassTypeRef, 0x1122334455667788, ""},
				{AttrContainingType, FormRef1, ClassReference, base + 0x22, ""}}, true},
		{"flag 2 is set", 4, // debug/dwarf says false: it tests == 1
			[]spec{{AttrExternal, FormFlag, 0}},
			func(w *wbuf) { w.u8(2) },
			[]Field{{AttrExternal, FormFlag, ClassFlag, 1, ""}}, false},
		{"blocks", 4,
			[]spec{{AttrLocation, FormBlock1, 0}, {AttrConstValue, FormBlock2, 0}, {AttrFrameBase, FormExprloc, 0}, {AttrName, FormString, 0}},
			func(w *wbuf) {
				w.u8(2, 0x91, 0x10)
				w.u16(3)
				w.u8(1, 2, 3)
				w.uleb(1)
				w.u8(0x9c)
				w.str("")
			},
			[]Field{{AttrLocation, FormBlock1, ClassExprLoc, base + 11 + 2, "\x91\x10"},
				{AttrConstValue, FormBlock2, ClassBlock, base + 11 + 6, "\x01\x02\x03"},
				{AttrFrameBase, FormExprloc, ClassExprLoc, base + 11 + 10, "\x9c"}, {AttrName, FormString, ClassString, 0, ""}}, true},
		{"section pointers by version", 3,
			[]spec{{AttrStmtList, FormData4, 0}, {AttrRanges, FormData4, 0}, {AttrByteSize, FormData4, 0}, {AttrMacroInfo, FormSecOffset, 0}},
			func(w *wbuf) { w.u32(0x99); w.u32(0x98); w.u32(0x97); w.u32(0x96) },
			[]Field{{AttrStmtList, FormData4, ClassSecOffset, 0x99, ""}, {AttrRanges, FormData4, ClassSecOffset, 0x98, ""},
				{AttrByteSize, FormData4, ClassConstant, 0x97, ""}, {AttrMacroInfo, FormSecOffset, ClassSecOffset, 0x96, ""}}, false},
		{"supplementary forms unresolved", 5,
			[]spec{{AttrName, FormGNUStrpAlt, 0}, {AttrType, FormGNURefAlt, 0}, {AttrLinkageName, FormStrpSup, 0}, {AttrSpecification, FormRefSup4, 0}, {AttrByteSize, FormData1, 0}},
			func(w *wbuf) { w.u32(7); w.u32(8); w.u32(9); w.u32(10); w.u8(4) },
			[]Field{{AttrName, FormGNUStrpAlt, ClassUnresolved, 7, ""}, {AttrType, FormGNURefAlt, ClassUnresolved, 8, ""},
				{AttrLinkageName, FormStrpSup, ClassUnresolved, 9, ""}, {AttrSpecification, FormRefSup4, ClassUnresolved, 10, ""},
				{AttrByteSize, FormData1, ClassConstant, 4, ""}}, true},
		{"strx and addrx through the bases", 5,
			[]spec{{AttrStrOffsetsBase, FormSecOffset, 0}, {AttrAddrBase, FormSecOffset, 0}, {AttrName, FormStrx1, 0},
				{AttrProducer, FormStrx, 0}, {AttrLowPC, FormAddrx1, 0}, {AttrEntryPC, FormAddrx, 0}, {AttrRanges, FormRnglistx, 0}, {AttrLocation, FormLoclistx, 0}},
			func(w *wbuf) {
				w.u32(8)
				w.u32(8)
				w.u8(1)
				w.uleb(0)
				w.u8(0)
				w.uleb(1)
				w.uleb(5)
				w.uleb(6)
			},
			[]Field{{AttrStrOffsetsBase, FormSecOffset, ClassSecOffset, 8, ""}, {AttrAddrBase, FormSecOffset, ClassSecOffset, 8, ""},
				{AttrName, FormStrx1, ClassString, 1, "world"}, {AttrProducer, FormStrx, ClassString, 0, "hello"},
				{AttrLowPC, FormAddrx1, ClassAddress, 0xdead, ""}, {AttrEntryPC, FormAddrx, ClassAddress, 0xbeef, ""},
				{AttrRanges, FormRnglistx, ClassRngList, 5, ""}, {AttrLocation, FormLoclistx, ClassLocList, 6, ""}}, false},
		{"GNU split forms", 4,
			[]spec{{AttrGNUAddrBase, FormSecOffset, 0}, {AttrName, FormGNUStrIndex, 0}, {AttrLowPC, FormGNUAddrIndex, 0}},
			func(w *wbuf) { w.u32(16); w.uleb(3); w.uleb(0) },
			[]Field{{AttrGNUAddrBase, FormSecOffset, ClassSecOffset, 16, ""}, {AttrName, FormGNUStrIndex, ClassString, 3, "world"},
				{AttrLowPC, FormGNUAddrIndex, ClassAddress, 0xbeef, ""}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			abbrev := abbrevTableBytes(abbr{1, TagCompileUnit, false, c.specs})
			var body wbuf
			body.uleb(1)
			c.value(&body)
			var u []byte
			if c.version == 5 {
				u = unitV5(body)
			} else {
				u = unitV4(c.version, body)
			}
			info := append(slices.Clone(prefixUnit), u...)
			s := Sections{Info: info, Abbrev: abbrev, Str: str, StrOffsets: strOffsets, Addr: addr}
			d, err := New(s)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Units()[1].Err; err != nil {
				t.Fatal(err)
			}
			es := readAll(t, d, 1)
			if len(es) != 1 {
				t.Fatalf("%d entries, want 1", len(es))
			}
			if !slices.Equal(es[0].Fields, c.want) {
				t.Errorf("fields\n got %+v\nwant %+v", es[0].Fields, c.want)
			}
			if c.std {
				std, err := stdDWARF(s)
				if err != nil {
					t.Fatal(err)
				}
				compareAll(t, std, d)
			}
		})
	}
}

// TestStringsCopied checks the promise about what strings pin: inline
// DW_FORM_string values are copies, .debug_str values are not.
func TestStringsCopied(t *testing.T) {
	abbrev := abbrevTableBytes(abbr{1, TagCompileUnit, false, []spec{{AttrName, FormString, 0}, {AttrProducer, FormStrp, 0}}})
	var body wbuf
	body.uleb(1)
	body.str("inline")
	body.u32(1)
	s := Sections{Info: unitV4(4, body), Abbrev: abbrev, Str: []byte("\x00pooled\x00")}
	d, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	es := readAll(t, d, 0)
	within := func(str string, sec []byte) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(str)))
		lo := uintptr(unsafe.Pointer(&sec[0]))
		return p >= lo && p < lo+uintptr(len(sec))
	}
	name, _ := es[0].String(AttrName)
	prod, _ := es[0].String(AttrProducer)
	if name != "inline" || within(name, s.Info) {
		t.Errorf("DW_FORM_string %q must be a copy", name)
	}
	if prod != "pooled" || !within(prod, s.Str) {
		t.Errorf("DW_FORM_strp %q must point into .debug_str", prod)
	}
}

// TestBadInput checks that each kind of damage gives an error that says
// what is wrong and where, and spares the other units.
func TestBadInput(t *testing.T) {
	// Each bad unit has a root with children (code 2) and then the bad
	// entry (code 1) at offset 12, its first value at 13.
	root := abbr{2, TagCompileUnit, true, nil}
	table := func(specs ...spec) []byte { return abbrevTableBytes(root, abbr{1, TagVariable, false, specs}) }
	child := func(b ...byte) []byte { return unitV4(4, append([]byte{2}, b...)) }
	goodTable := abbrevTableBytes(abbr{1, TagCompileUnit, false, []spec{{AttrName, FormString, 0}}})
	goodBody := append([]byte{1}, "ok\x00"...)
	cases := []struct {
		name    string
		info    []byte // the bad unit
		abbrev  []byte // its abbreviations
		atUnit  bool   // Unit.Err is set, else the Reader reports it
		want    error  // cause
		section string // of the DecodeError
		offset  uint64
	}{
		{name: "header cut short", info: []byte{3, 0, 0, 0, 4, 0, 0}, abbrev: table(),
			atUnit: true, want: ErrTruncated, section: ".debug_info", offset: 6},
		{name: "unsupported version", info: []byte{7, 0, 0, 0, 9, 0, 0, 0, 0, 0, 8}, abbrev: table(),
			atUnit: true, want: ErrBadVersion, section: ".debug_info", offset: 0},
		{name: "abbreviation table offset beyond the section", info: unitV4At(4, 0x1000, []byte{2, 0}), abbrev: table(),
			atUnit: true, want: ErrBadOffset, section: ".debug_abbrev", offset: 0},
		{name: "unknown form in the abbreviations", info: child(1, 0), abbrev: table(spec{AttrName, 0x99, 0}),
			atUnit: true, want: ErrUnknownForm, section: ".debug_abbrev", offset: 9},
		{name: "bad root entry", info: unitV4(4, []byte{9}), abbrev: table(),
			atUnit: true, want: ErrUnknownCode, section: ".debug_info", offset: 11},
		{name: "abbreviation code not in the table", info: child(7, 0), abbrev: table(),
			want: ErrUnknownCode, section: ".debug_info", offset: 12},
		{name: "indirect to an unknown form", info: child(1, 0x77), abbrev: table(spec{AttrName, FormIndirect, 0}),
			want: ErrUnknownForm, section: ".debug_info", offset: 13},
		{name: "string runs past its unit", info: child(1, 'a', 'b'), abbrev: table(spec{AttrName, FormString, 0}),
			want: ErrTruncated, section: ".debug_info", offset: 13},
		{name: "block longer than its unit", info: child(1, 9, 1, 2), abbrev: table(spec{AttrConstValue, FormBlock1, 0}),
			want: ErrTruncated, section: ".debug_info", offset: 13},
		{name: "data4 cut by the unit's end", info: child(1, 1, 2), abbrev: table(spec{AttrByteSize, FormData4, 0}),
			want: ErrTruncated, section: ".debug_info", offset: 13},
		{name: "addrx without .debug_addr", info: child(1, 0), abbrev: table(spec{AttrLowPC, FormAddrx1, 0}),
			want: ErrNoSection, section: ".debug_info", offset: 13},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info := append(slices.Clone(c.info), unitV4At(4, uint32(len(c.abbrev)), goodBody)...)
			abbrev := append(slices.Clone(c.abbrev), goodTable...)
			d, err := New(Sections{Info: info, Abbrev: abbrev})
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Units()) != 2 {
				t.Fatalf("%d units, want 2", len(d.Units()))
			}
			err = d.Units()[0].Err
			if c.atUnit != (err != nil) {
				t.Fatalf("Unit.Err = %v, want set: %v", err, c.atUnit)
			}
			r := d.Reader()
			var e Entry
			if err == nil {
				for err == nil {
					err = r.Next(&e)
				}
			} else if err2 := r.Next(&e); err2 != err {
				t.Errorf("Next on the bad unit: %v, want Unit.Err", err2)
			}
			if err2 := r.Next(&e); err2 != err {
				t.Errorf("error not sticky: %v then %v", err, err2)
			}
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, c.want) {
				t.Fatalf("error %v, want a DecodeError wrapping %v", err, c.want)
			}
			if de.Section != c.section || de.Offset != c.offset {
				t.Errorf("error at %s %#x, want %s %#x (%v)", de.Section, de.Offset, c.section, c.offset, err)
			}
			if es := readAll(t, d, 1); len(es) != 1 || es[0].Fields[0].Str != "ok" {
				t.Errorf("unit after the bad one: %+v", es)
			}
		})
	}
	// A unit whose length runs past the section, or is reserved, breaks
	// the chain: New fails.
	for _, c := range []struct {
		name string
		tail []byte
		want error
	}{
		{"unit runs past the section", []byte{0x40, 0, 0, 0, 4, 0}, ErrTruncated},
		{"reserved unit length", []byte{0xf0, 0xff, 0xff, 0xff}, ErrMalformed},
		{"cut inside the length", []byte{0xff, 0xff, 0xff, 0xff, 1, 2}, ErrTruncated},
	} {
		t.Run(c.name, func(t *testing.T) {
			good := unitV4(4, goodBody)
			_, err := New(Sections{Info: append(slices.Clone(good), c.tail...), Abbrev: goodTable})
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, c.want) || de.Section != ".debug_info" || de.Offset < uint64(len(good)) {
				t.Fatalf("New: %v, want a DecodeError wrapping %v past offset %#x", err, c.want, len(good))
			}
		})
	}
}

// TestSkipChildren checks that SkipChildren lands on the next sibling
// whatever DW_AT_sibling says, and never loops.
func TestSkipChildren(t *testing.T) {
	abbrev := abbrevTableBytes(
		abbr{1, TagCompileUnit, true, nil},
		abbr{2, TagSubprogram, true, []spec{{AttrSibling, FormRef4, 0}}},
		abbr{3, TagVariable, false, nil},
		abbr{4, TagLexicalBlock, true, nil},
	)
	const hdr = 11
	// Unit-relative offsets of the entries below.
	const rootOff, aOff, bOff = hdr, hdr + 1, hdr + 1 + 5 + 1 + 1 + 1 + 1 + 1
	build := func(sibling uint32, terminated bool) []byte {
		var w wbuf
		w.u8(1) // root
		w.u8(2) // A
		w.u32(sibling)
		w.u8(3) // A's child
		w.u8(4) // lexical block with children
		w.u8(3) // its child
		w.u8(0) // end of block's children
		w.u8(0) // end of A's children
		if w.off() != bOff-hdr {
			t.Fatalf("layout: B at %d", w.off())
		}
		w.u8(3) // B
		if terminated {
			w.u8(0)
		}
		return unitV4(4, w)
	}
	for _, c := range []struct {
		name    string
		sibling uint32
	}{
		{"good", bOff}, {"backwards to the root", rootOff}, {"to itself", aOff}, {"zero", 0},
		{"into A's children", aOff + 6}, {"past the unit", 0x1000}, {"huge", 0xffffffff},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := New(Sections{Info: build(c.sibling, true), Abbrev: abbrev})
			if err != nil {
				t.Fatal(err)
			}
			r := d.Reader()
			var e Entry
			for _, want := range []Tag{TagCompileUnit, TagSubprogram} {
				if err := r.Next(&e); err != nil || e.Tag != want {
					t.Fatalf("Next: %v %v, want %v", e.Tag, err, want)
				}
			}
			r.SkipChildren()
			if err := r.Next(&e); err != nil || e.Offset != bOff {
				// A forward sibling inside the unit is trusted, as in
				// debug/dwarf: that case lands where it points.
				if !(c.sibling > aOff+5 && c.sibling < bOff && err == nil && e.Offset == uint64(c.sibling)) {
					t.Fatalf("after SkipChildren: entry at %#x (%v), want %#x", e.Offset, err, bOff)
				}
			}
		})
	}
	t.Run("root skips to the unit's end", func(t *testing.T) {
		d, _ := New(Sections{Info: build(bOff, true), Abbrev: abbrev})
		r := d.Reader()
		var e Entry
		r.Next(&e)
		r.SkipChildren()
		if err := r.Next(&e); err != io.EOF {
			t.Fatalf("after skipping the root's children: %v, want io.EOF", err)
		}
	})
	t.Run("unterminated children", func(t *testing.T) {
		info := build(0, false)
		info = info[:len(info)-3] // cut B and A's closing nulls
		binary.LittleEndian.PutUint32(info, uint32(len(info)-4))
		d, err := New(Sections{Info: info, Abbrev: abbrev})
		if err != nil {
			t.Fatal(err)
		}
		r := d.Reader()
		var e Entry
		r.Next(&e)
		r.Next(&e)
		r.SkipChildren()
		if err := r.Next(&e); err != io.EOF {
			t.Fatalf("after SkipChildren: %v, want io.EOF", err)
		}
	})
}

// TestSeek checks Seek and UnitOf across units.
func TestSeek(t *testing.T) {
	abbrev := abbrevTableBytes(abbr{1, TagCompileUnit, true, nil}, abbr{2, TagVariable, false, []spec{{AttrName, FormString, 0}}})
	u := unitV4(4, []byte{1, 2, 'x', 0, 2, 'y', 0, 0})
	info := append(slices.Clone(u), u...)
	d, err := New(Sections{Info: info, Abbrev: abbrev})
	if err != nil {
		t.Fatal(err)
	}
	n := uint64(len(u))
	for _, c := range []struct {
		off  uint64
		unit int
	}{{0, 0}, {n - 1, 0}, {n, 1}, {2*n - 1, 1}, {2 * n, -1}, {1 << 40, -1}} {
		if got := d.UnitOf(c.off); got != c.unit {
			t.Errorf("UnitOf(%#x) = %d, want %d", c.off, got, c.unit)
		}
	}
	r := d.Reader()
	var e Entry
	if err := r.Seek(n + 15); err != nil {
		t.Fatal(err)
	}
	if err := r.Next(&e); err != nil || e.Fields[0].Str != "y" || r.Unit() != &d.Units()[1] {
		t.Fatalf("after Seek: %+v %v", e, err)
	}
	if err := r.Seek(n + 3); !errors.Is(err, errBeforeHeader) {
		t.Errorf("Seek into a header: %v", err)
	}
	if err := r.Seek(2 * n); !errors.Is(err, ErrBadOffset) {
		t.Errorf("Seek past the end: %v", err)
	}
}

// TestBadStringOffsets: strings are read when asked for, so a string whose
// offset is bad reads as absent, and the entries around it are unharmed.
func TestBadStringOffsets(t *testing.T) {
	root := abbr{2, TagCompileUnit, true, nil}
	table := func(specs ...spec) []byte { return abbrevTableBytes(root, abbr{1, TagVariable, false, specs}) }
	child := func(b ...byte) []byte { return unitV4(4, append([]byte{2}, b...)) }
	goodTable := abbrevTableBytes(abbr{1, TagCompileUnit, false, []spec{{AttrName, FormString, 0}}})
	goodBody := append([]byte{1}, "ok\x00"...)
	for _, c := range []struct {
		name   string
		info   []byte
		abbrev []byte
	}{
		{"strp beyond .debug_str", child(1, 0x40, 0, 0, 0), table(spec{AttrName, FormStrp, 0})},
		{"strx without .debug_str_offsets", child(1, 0), table(spec{AttrName, FormStrx1, 0})},
	} {
		info := append(slices.Clone(c.info), unitV4At(4, uint32(len(c.abbrev)), goodBody)...)
		abbrev := append(slices.Clone(c.abbrev), goodTable...)
		d, err := New(Sections{Info: info, Abbrev: abbrev, Str: []byte("x\x00")})
		if err != nil {
			t.Fatal(err)
		}
		r := d.Reader()
		var e Entry
		for r.Next(&e) == nil && e.Tag != TagVariable {
		}
		if e.Tag != TagVariable {
			t.Fatalf("%s: the entry does not decode", c.name)
		}
		if s, ok := e.String(AttrName); ok || s != "" {
			t.Errorf("%s: String = %q, %v; want absent", c.name, s, ok)
		}
		if f, ok := e.Field(AttrName); !ok || f.Str != "" {
			t.Errorf("%s: Field = %+v, %v", c.name, f, ok)
		}
		if es := readAll(t, d, 1); len(es) != 1 || es[0].Fields[0].Str != "ok" {
			t.Errorf("%s: unit after the bad one: %+v", c.name, es)
		}
	}
}
