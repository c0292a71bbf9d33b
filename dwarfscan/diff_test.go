package dwarfscan

import (
	"debug/dwarf"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"

	"bloop/structure"
)

// TestDifferential walks every entry, range list and line program of the
// corpus with debug/dwarf and with dwarfscan and requires the same answers.
func TestDifferential(t *testing.T) {
	for _, path := range corpus(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			s, reason, err := openELF(path)
			if err != nil {
				t.Fatal(err)
			}
			if reason != "" {
				t.Skip(reason)
			}
			std, err := stdDWARF(s)
			if err != nil {
				t.Fatalf("debug/dwarf: %v", err)
			}
			d, err := New(s)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			st := compareAll(t, std, d)
			t.Logf("%d units, %d entries, %d fields, %d range lists, %d line rows", st.units, st.entries, st.fields, st.ranges, st.rows)
		})
	}
}

type diffStats struct{ units, entries, fields, ranges, rows int }

func compareAll(t *testing.T, std *dwarf.Data, d *Data) (st diffStats) {
	sr := std.Reader()
	r := d.Reader()
	var e Entry
	var rs []structure.Range
	for ui := range d.Units() {
		u := &d.Units()[ui]
		if u.Err != nil {
			t.Fatalf("unit at %#x: %v", u.Offset, u.Err)
		}
		st.units++
		r.SeekUnit(ui)
		var root *dwarf.Entry
		for {
			err := r.Next(&e)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			se, err := sr.Next()
			if err != nil || se == nil {
				t.Fatalf("debug/dwarf at %#x: %v, %v", e.Offset, se, err)
			}
			if root == nil {
				root = se
			}
			st.entries++
			st.fields += len(e.Fields)
			if msg := compareEntry(d, u, &e, se); msg != "" {
				t.Fatalf("entry at %#x (tag %#x): %s", e.Offset, uint32(se.Tag), msg)
			}
			if se.AttrField(dwarf.AttrLowpc) != nil || se.AttrField(dwarf.AttrRanges) != nil {
				want, werr := std.Ranges(se)
				rs, err = d.Ranges(u, &e, rs[:0])
				if (werr == nil) != (err == nil) {
					t.Fatalf("Ranges at %#x: debug/dwarf error %v, dwarfscan error %v", e.Offset, werr, err)
				}
				if werr == nil && !sameRanges(want, rs) {
					t.Fatalf("Ranges at %#x: debug/dwarf %x, dwarfscan %x", e.Offset, want, rs)
				}
				st.ranges++
			}
		}
		if root != nil {
			st.rows += compareLines(t, std, d, u, root)
		}
	}
	if se, err := sr.Next(); se != nil || err != nil {
		t.Fatalf("debug/dwarf has more: %v, %v", se, err)
	}
	return st
}

func sameRanges(want [][2]uint64, got []structure.Range) bool {
	if len(want) != len(got) {
		return false
	}
	for i := range want {
		if want[i][0] != got[i].Lo || want[i][1] != got[i].Hi {
			return false
		}
	}
	return true
}

// classOK tells whether dwarfscan's class c is what debug/dwarf's class
// dc maps to.
func classOK(dc dwarf.Class, f *Field) bool {
	switch dc {
	case dwarf.ClassString:
		// debug/dwarf calls DW_FORM_strp_sup a string, but gives its raw offset.
		return f.Class == ClassString || f.Form == FormStrpSup && f.Class == ClassUnresolved
	case dwarf.ClassAddress:
		return f.Class == ClassAddress
	case dwarf.ClassConstant:
		return f.Class == ClassConstant
	case dwarf.ClassFlag:
		return f.Class == ClassFlag
	case dwarf.ClassReference:
		return f.Class == ClassReference || f.Class == ClassUnresolved
	case dwarf.ClassReferenceSig:
		return f.Class == ClassTypeRef
	case dwarf.ClassBlock:
		return f.Class == ClassBlock
	case dwarf.ClassExprLoc:
		return f.Class == ClassExprLoc
	case dwarf.ClassRngList:
		return f.Class == ClassRngList
	case dwarf.ClassLocList:
		return f.Class == ClassLocList
	case dwarf.ClassReferenceAlt, dwarf.ClassStringAlt:
		return f.Class == ClassUnresolved
	case dwarf.ClassLinePtr, dwarf.ClassLocListPtr, dwarf.ClassMacPtr, dwarf.ClassRangeListPtr,
		dwarf.ClassAddrPtr, dwarf.ClassRngListsPtr, dwarf.ClassStrOffsetsPtr:
		// debug/dwarf also calls data1/data2/udata of these attributes
		// pointers in DWARF 2-3; DWARF 3 (7.5.4) makes only data4/data8 so.
		return f.Class == ClassSecOffset || f.Class == ClassConstant
	case dwarf.ClassUnknown: // sec_offset of an attribute debug/dwarf does not know
		return f.Class == ClassSecOffset
	}
	return false
}

func compareEntry(d *Data, u *Unit, e *Entry, se *dwarf.Entry) string {
	if e.Tag == 0 && se.Tag == 0 && !e.Children && len(e.Fields) == 0 {
		return "" // debug/dwarf gives null entries offset 0
	}
	if e.Offset != uint64(se.Offset) || e.Tag != Tag(se.Tag) || e.Children != se.Children {
		return fmt.Sprintf("header: dwarfscan %#x %#x %v, debug/dwarf %#x %#x %v", e.Offset, e.Tag, e.Children, se.Offset, uint32(se.Tag), se.Children)
	}
	if len(e.Fields) != len(se.Field) {
		return fmt.Sprintf("%d fields, debug/dwarf %d", len(e.Fields), len(se.Field))
	}
	for i := range e.Fields {
		e.read(i)
		f, sf := &e.Fields[i], &se.Field[i]
		if f.Attr != Attr(sf.Attr) {
			return fmt.Sprintf("field %d: attr %#x, debug/dwarf %#x", i, f.Attr, sf.Attr)
		}
		if !classOK(sf.Class, f) {
			return fmt.Sprintf("attr %#x form %#x: class %v, debug/dwarf %v", f.Attr, f.Form, f.Class, sf.Class)
		}
		var ok bool
		switch v := sf.Val.(type) {
		case string:
			ok = f.Str == v
		case int64:
			ok = f.Val == uint64(v)
		case uint64:
			if f.Form == FormRnglistx {
				off, err := d.rnglistx(u, f.Val)
				ok = err == nil && off == v
			} else {
				ok = f.Val == v
			}
		case uint32:
			ok = f.Val == uint64(v)
		case bool:
			ok = (f.Val != 0) == v
		case dwarf.Offset:
			ok = uint32(f.Val) == uint32(v)
		case []byte:
			ok = f.Str == string(v)
		default:
			return fmt.Sprintf("attr %#x: unexpected debug/dwarf value %T", f.Attr, v)
		}
		if !ok {
			return fmt.Sprintf("attr %#x form %#x: value %#x %q, debug/dwarf %#v", f.Attr, f.Form, f.Val, f.Str, sf.Val)
		}
	}
	return ""
}

func stdName(f *dwarf.LineFile) string {
	if f == nil {
		return ""
	}
	return f.Name
}

// compareLines compares the file tables and every row of unit u's line
// program, and returns the number of rows.
func compareLines(t *testing.T, std *dwarf.Data, d *Data, u *Unit, root *dwarf.Entry) int {
	sl, serr := std.LineReader(root)
	p, err := d.LineProgram(u)
	if (serr == nil) != (err == nil) || (sl == nil) != (p == nil) {
		t.Fatalf("unit %#x: LineReader %v, %v; LineProgram %v, %v", u.Offset, sl != nil, serr, p != nil, err)
	}
	if p == nil {
		return 0
	}
	sameFiles := func(when string) {
		var want []string
		for _, f := range sl.Files() {
			want = append(want, stdName(f))
		}
		if !slices.Equal(want, p.Files()) {
			t.Fatalf("unit %#x: files %s: dwarfscan %q\ndebug/dwarf %q", u.Offset, when, p.Files(), want)
		}
	}
	sameFiles("at start")
	var se dwarf.LineEntry
	var row LineRow
	n := 0
	for {
		serr := sl.Next(&se)
		err := p.Next(&row)
		if serr == io.EOF && err == io.EOF {
			break
		}
		if serr != nil || err != nil {
			t.Fatalf("unit %#x row %d: debug/dwarf %v, dwarfscan %v", u.Offset, n, serr, err)
		}
		name := ""
		if files := p.Files(); row.File >= 0 && row.File < len(files) {
			name = files[row.File]
		}
		if row.Address != se.Address || name != stdName(se.File) || row.Line != se.Line ||
			row.IsStmt != se.IsStmt || row.EndSequence != se.EndSequence {
			t.Fatalf("unit %#x row %d: dwarfscan %+v %q, debug/dwarf %#x %q %d stmt=%v end=%v", u.Offset, n,
				row, name, se.Address, stdName(se.File), se.Line, se.IsStmt, se.EndSequence)
		}
		n++
	}
	sameFiles("at end")
	return n
}

// TestConcurrentReaders walks one Data from several goroutines at once
// (run with -race to check that nothing shared is written) and requires
// each to see the same entries, ranges and rows.
func TestConcurrentReaders(t *testing.T) {
	s, reason, err := openELF("../testdata/bin/tmpl-gcc12-O2")
	if err != nil || reason != "" {
		t.Fatal(err, reason)

	}
	d, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	sum := func() (h uint64) {
		mix := func(v uint64) { h = (h ^ v) * 0x100000001b3 }
		r := d.Reader()
		var e Entry
		var rs []structure.Range
		for ui := range d.Units() {
			u := &d.Units()[ui]
			r.SeekUnit(ui)
			for r.Next(&e) == nil {
				mix(e.Offset)
				for _, f := range e.Fields {
					mix(f.Val)
					mix(uint64(len(f.Str)))
				}
				rs, _ = d.Ranges(u, &e, rs[:0])
				for _, x := range rs {
					mix(x.Lo ^ x.Hi<<1)
				}
			}
			if p, _ := d.LineProgram(u); p != nil {
				var row LineRow
				for p.Next(&row) == nil {
					mix(row.Address ^ uint64(row.Line)<<32 ^ uint64(row.File)<<48)
				}
			}
		}
		return h
	}
	want := sum()
	got := make([]uint64, 4)
	done := make(chan bool)
	for i := range got {
		go func() { got[i] = sum(); done <- true }()
	}
	for range got {
		<-done
	}
	for i, h := range got {
		if h != want {
			t.Errorf("goroutine %d: checksum %#x, want %#x", i, h, want)
		}
	}
}
