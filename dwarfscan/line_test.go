package dwarfscan

import (
	"errors"
	"io"
	"slices"
	"testing"
)

// lineProgramV4 builds a DWARF 4 line program with min_inst_length 4,
// maximum_operations_per_instruction 3, and the given opcodes.
func lineProgramV4(ops []byte) []byte { return lineProgramV4Inc("/inc", ops) }

// lineProgramV4Inc is lineProgramV4 with include directory 1 inc.
func lineProgramV4Inc(inc string, ops []byte) []byte {
	var h wbuf
	h.u8(4, 3, 1)                            // min_inst_length, max_ops, default_is_stmt
	h.u8(0xfd, 12, 13)                       // line_base -3, line_range 12, opcode_base 13
	h.u8(0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1) // standard opcode lengths
	h.str(inc)                               // include directory 1
	h.u8(0)                                  // end of directories
	h.str("a.c")                             // file 1, directory 0 (comp_dir)
	h.u8(0, 0, 0)                            //
	h.str("b.h")                             // file 2, directory 1
	h.u8(1, 0, 0)                            //
	h.u8(0)                                  // end of files
	return lineUnit(4, h, ops)
}

// TestLineProgram runs a program with DW_LNE_define_file and
// maximum_operations_per_instruction 3, against hand-computed rows and
// debug/dwarf.
func TestLineProgram(t *testing.T) {
	var ops wbuf
	setAddress := func(a uint64) { ops.u8(0, 9, 2); ops.u64(a) }
	special := func(opAdvance, lineDelta int) { ops.u8(byte(opAdvance*12 + lineDelta + 3 + 13)) }
	setAddress(0x1000)
	special(1, 2) // op_index 1: address stays
	special(2, 0) // op_index 3 = one instruction: +4
	ops.u8(2, 5)  // advance_pc 5 ops: op_index 7 -> +4, op_index 2
	ops.u8(0, 12, 3)
	ops.str("extra.c") // define_file: file 3 in directory 1
	ops.u8(1, 0, 0)
	ops.u8(4, 3) // set_file 3
	ops.u8(6)    // negate_stmt
	ops.u8(1)    // copy
	ops.u8(8)    // const_add_pc: (255-13)/12 = 20 ops: op_index 22 -> +28, op_index 1
	ops.u8(3, 0x7f)
	special(0, 1)
	ops.u8(9, 0x10, 0) // fixed_advance_pc 0x10
	ops.u8(0, 1, 1)    // end_sequence
	setAddress(0x2000)
	ops.u8(1)    // copy
	ops.u8(2, 5) // op_index 5 -> +4, op_index 2
	ops.u8(0, 1, 1)
	want := []LineRow{
		{Address: 0x1000, File: 1, Line: 3, IsStmt: true, EndSequence: false},
		{Address: 0x1004, File: 1, Line: 3, IsStmt: true, EndSequence: false},
		{Address: 0x1008, File: 3, Line: 3, IsStmt: false, EndSequence: false},
		{Address: 0x1024, File: 3, Line: 3, IsStmt: false, EndSequence: false},
		{Address: 0x1034, File: 3, Line: 3, IsStmt: false, EndSequence: true},
		{Address: 0x2000, File: 1, Line: 1, IsStmt: true, EndSequence: false},
		{Address: 0x2004, File: 1, Line: 1, IsStmt: true, EndSequence: true},
	}
	wantFiles := []string{"", "/src/a.c", "/inc/b.h", "/inc/extra.c"}

	abbrev := abbrevTableBytes(abbr{1, TagCompileUnit, false, []spec{{AttrStmtList, FormSecOffset, 0}, {AttrCompDir, FormString, 0}}})
	var body wbuf
	body.u8(1)
	body.u32(0)
	body.str("/src")
	s := Sections{Info: unitV4(4, body), Abbrev: abbrev, Line: lineProgramV4(ops)}
	d, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.LineProgram(&d.Units()[0])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Files(), wantFiles[:3]) {
		t.Errorf("files at start %q", p.Files())
	}
	var got []LineRow
	for {
		var row LineRow
		err := p.Next(&row)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, row)
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows\n got %+v\nwant %+v", got, want)
	}
	if !slices.Equal(p.Files(), wantFiles) {
		t.Errorf("files at end %q", p.Files())
	}
	p.Reset()
	if len(p.Files()) != 3 {
		t.Errorf("Reset kept defined files: %q", p.Files())
	}
	std, err := stdDWARF(s)
	if err != nil {
		t.Fatal(err)
	}
	compareAll(t, std, d)
}

// TestRawLineProgram: libdw's spelling, nothing cleaned or joined with a
// relative DW_AT_comp_dir, beside LineProgram's.
func TestRawLineProgram(t *testing.T) {
	var ops wbuf
	ops.u8(0, 12, 3)
	ops.str("extra.c") // define_file: file 3 in directory 1
	ops.u8(1, 0, 0)
	ops.u8(0, 9, 2)
	ops.u64(0x1000)
	ops.u8(0, 1, 1) // end_sequence
	abbrev := abbrevTableBytes(abbr{1, TagCompileUnit, false, []spec{{AttrStmtList, FormSecOffset, 0}, {AttrCompDir, FormString, 0}}})
	var body wbuf
	body.u8(1)
	body.u32(0)
	body.str("./m")
	d, err := New(Sections{Info: unitV4(4, body), Abbrev: abbrev, Line: lineProgramV4Inc("../inc", ops)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		open func(*Unit) (*LineProgram, error)
		want []string
	}{
		{d.RawLineProgram, []string{"", "./m/a.c", "../inc/b.h", "../inc/extra.c"}},
		{d.LineProgram, []string{"", "m/a.c", "inc/b.h", "inc/extra.c"}},
	} {
		p, err := c.open(&d.Units()[0])
		if err != nil {
			t.Fatal(err)
		}
		var row LineRow
		for p.Next(&row) == nil {
		}
		if !slices.Equal(p.Files(), c.want) {
			t.Errorf("files %q, want %q", p.Files(), c.want)
		}
	}
}

// TestLineErrors checks damaged line programs.
func TestLineErrors(t *testing.T) {
	abbrev := abbrevTableBytes(abbr{1, TagCompileUnit, false, []spec{{AttrStmtList, FormSecOffset, 0}}})
	var body wbuf
	body.u8(1)
	body.u32(0)
	info := unitV4(4, body)
	for _, c := range []struct {
		name   string
		line   []byte
		header bool // LineProgram fails, else Next
		want   error
	}{
		{"define_file in a missing directory", lineProgramV4([]byte{0, 6, 3, 'x', 0, 7, 0, 0}), false, ErrMalformed},
		{"define_file without a name", lineProgramV4([]byte{0, 2, 3, 0}), false, ErrMalformed},
		{"extended opcode longer than the program", lineProgramV4([]byte{0, 9, 2, 0}), false, ErrTruncated},
		{"set_address longer than its length", lineProgramV4([]byte{0, 2, 2, 1, 2, 3, 4, 5, 6, 7, 8}), false, ErrMalformed},
		{"advance_pc cut short", lineProgramV4([]byte{2, 0x80}), false, ErrTruncated},
		{"zero extended length", lineProgramV4([]byte{0, 0, 1}), false, ErrMalformed},
		{"program past the section", lineProgramV4(nil)[:20], true, ErrTruncated},
		{"version 6", func() []byte { b := lineProgramV4(nil); b[4] = 6; return b }(), true, ErrBadVersion},
		{"line_range 0", func() []byte { b := lineProgramV4(nil); b[14] = 0; return b }(), true, ErrMalformed},
		{"wrong standard opcode length", func() []byte { b := lineProgramV4(nil); b[17] = 2; return b }(), true, ErrMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := New(Sections{Info: info, Abbrev: abbrev, Line: c.line})
			if err != nil {
				t.Fatal(err)
			}
			p, err := d.LineProgram(&d.Units()[0])
			if !c.header {
				if err != nil {
					t.Fatalf("LineProgram: %v", err)
				}
				var row LineRow
				for err == nil {
					err = p.Next(&row)
				}
			}
			var de *DecodeError
			if !errors.As(err, &de) || !errors.Is(err, c.want) || de.Section != ".debug_line" {
				t.Fatalf("error %v, want a .debug_line DecodeError wrapping %v", err, c.want)
			}
		})
	}
}

// TestJoinFast checks the shortcut against the full join on the cases
// path.Clean would change.
func TestJoinFast(t *testing.T) {
	dirs := []string{"", ".", "/", "/usr/include", "/usr/include/", "rel/dir", "a/..", "/a/./b", "..", "C:\\src", `\\host\share\x`, "//x"}
	files := []string{"a.c", "./a.c", "../a.c", "x/../a.c", "x//a.c", "x/", "/abs/a.c", ".", "..", "", "sub/dir/a.h", "D:a.c"}
	for _, d := range dirs {
		clean := cleanDirs([]string{d})[0]
		for _, f := range files {
			if got, want := joinFast(d, clean, f), joinPath(d, f); got != want {
				t.Errorf("joinFast(%q, %v, %q) = %q, joinPath gives %q", d, clean, f, got, want)
			}
		}
	}
}
