package dwarfscan

import (
	"bloop/internal/testenv"
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"testing"
)

// nvLineProgram builds a line program as nvcc 11.2 on writes them for
// -lineinfo cubins: DWARF 2, opcode_base 10, one directory and file, and,
// when base is not nil, the function-name base after the file table.
func nvLineProgram(base *uint32, ops []byte) []byte {
	var h wbuf
	h.u8(1, 1)                      // min_inst_length, default_is_stmt
	h.u8(0xfb, 14, 10)              // line_base -5, line_range 14, opcode_base 10
	h.u8(0, 1, 1, 1, 1, 0, 0, 0, 1) // standard opcode lengths
	h.str("/src")                   // include directory 1
	h.u8(0)                         //
	h.str("k.cu")                   // file 1 in directory 1
	h.u8(1, 0, 0)                   //
	h.u8(0)                         // end of files
	if base != nil {
		h.u32(*base)
	}
	return lineUnit(2, h, ops)
}

// nvOps writes line-program opcodes for the tests.
type nvOps struct{ wbuf }

func (o *nvOps) setAddress(a uint64) { o.u8(0, 9, 2); o.u64(a) }
func (o *nvOps) advance(pc uint8, line int8) {
	o.u8(2, pc, 3)
	o.sleb(int64(line))
	o.u8(1) // copy
}
func (o *nvOps) inlinedCall(context, fn uint64) {
	var b wbuf
	b.u8(0x90)
	b.uleb(context)
	b.uleb(fn)
	o.u8(0)
	o.uleb(uint64(len(b)))
	o.bytes(b)
}
func (o *nvOps) end() { o.u8(0, 1, 1) }

// readNV returns the rows of a program built by nvLineProgram, and the
// error that ended them (io.EOF at the end).
func readNV(t *testing.T, prog []byte) (*LineProgram, []LineRow, error) {
	t.Helper()
	abbrev := abbrevTableBytes(abbr{1, TagCompileUnit, false, []spec{{AttrStmtList, FormSecOffset, 0}}})
	var body wbuf
	body.u8(1)
	body.u32(0)
	d, err := New(Sections{Info: unitV4(4, body), Abbrev: abbrev, Line: prog})
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.LineProgram(&d.Units()[0])
	if err != nil {
		t.Fatal(err)
	}
	var rows []LineRow
	for {
		var r LineRow
		if err := p.Next(&r); err != nil {
			return p, rows, err
		}
		rows = append(rows, r)
	}
}

// TestLineProgramNVIDIA: the inline registers go into the rows, stay set
// across rows until changed, and return to 0 at the end of a sequence;
// the header's function-name base is read.
func TestLineProgramNVIDIA(t *testing.T) {
	var o nvOps
	o.setAddress(0x100)
	o.advance(0, 9)  // row 1, line 10
	o.advance(16, 1) // row 2, line 11: the call site
	o.inlinedCall(2, 7)
	o.advance(0, 20)    // row 3, line 31, inlined at row 2
	o.advance(16, 1)    // row 4
	o.u8(0, 2, 0x91, 9) // set_function_name 9
	o.advance(16, 1)    // row 5, same call site, function 9
	o.inlinedCall(0, 0)
	o.advance(16, -20) // row 6: the caller again
	o.u8(2, 16)
	o.end()
	o.setAddress(0x200)
	o.advance(0, 0) // registers were reset by end_sequence
	o.end()
	base := uint32(0x40)
	p, rows, err := readNV(t, nvLineProgram(&base, o.wbuf))
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if b, ok := p.FuncNameBase(); !ok || b != 0x40 {
		t.Errorf("FuncNameBase %#x, %v; want 0x40, true", b, ok)
	}
	type ctx struct{ context, fn uint64 }
	want := []ctx{{0, 0}, {0, 0}, {2, 7}, {2, 7}, {2, 9}, {0, 0}, {0, 0}, {0, 0}, {0, 0}}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, r := range rows {
		if (ctx{r.Context, r.FuncName}) != want[i] {
			t.Errorf("row %d: context %d, function %d; want %v", i+1, r.Context, r.FuncName, want[i])
		}
	}
	if rows[2].Line != 31 || rows[2].Address != 0x110 {
		t.Errorf("row 3 at %#x line %d, want 0x110 line 31", rows[2].Address, rows[2].Line)
	}
	if _, _, err := readNV(t, nvLineProgram(nil, o.wbuf)); !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if p, _, _ := readNV(t, nvLineProgram(nil, o.wbuf)); func() bool { _, ok := p.FuncNameBase(); return ok }() {
		t.Error("a header without the word has a function-name base")
	}
}

// TestLineProgramNVIDIADamaged: an inlined-call opcode whose operands do
// not fit in it, or that runs past the program, stops the program with
// ErrInlinedCall; the rows before it are kept.
func TestLineProgramNVIDIADamaged(t *testing.T) {
	prefix := func() *nvOps {
		var o nvOps
		o.setAddress(0x100)
		o.advance(0, 9)
		return &o
	}
	cases := map[string][]byte{}
	o := prefix()
	o.u8(0, 1, 0x90) // no operands
	o.advance(16, 1)
	cases["no operands"] = o.wbuf
	o = prefix()
	o.u8(0, 2, 0x90, 0x85) // context's ULEB128 runs past the opcode
	o.u8(0x01, 1)
	cases["operand past the opcode"] = o.wbuf
	o = prefix()
	o.u8(0, 1, 0x91) // function name missing
	o.advance(16, 1)
	cases["set_function_name without its operand"] = o.wbuf
	o = prefix()
	o.u8(0, 9, 0x90, 1) // length past the program
	cases["past the program"] = o.wbuf
	for name, ops := range cases {
		t.Run(name, func(t *testing.T) {
			_, rows, err := readNV(t, nvLineProgram(nil, ops))
			if !errors.Is(err, ErrInlinedCall) {
				t.Errorf("error %v, want ErrInlinedCall", err)
			}
			if len(rows) != 1 {
				t.Errorf("%d rows kept, want 1", len(rows))
			}
		})
	}
}

// TestLineProgramNVIDIACubin reads the extension where nvcc 11.2 wrote it:
// in f4_2 of inlines+loops-sm_75-nvcc112-dr, f4_inline's code (line 48) is
// inlined at the kernel's fourth row (line 60), and its name is the first
// string of .debug_str.
func TestLineProgramNVIDIACubin(t *testing.T) {
	s, _, err := openELF(testenv.Shared(t, filepath.Join(cubinDir, "hpctoolkit-cuda/bin/inlines+loops-sm_75-nvcc112-dr")))
	if err != nil {
		t.Fatal(err)

	}
	_, rows, err := readNV(t, s.Line) // its first program, f4_2's
	if !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	site, first := rows[3], rows[4]
	if site.Line != 60 || site.Context != 0 || first.Line != 48 || first.Context != 4 {
		t.Fatalf("rows 4 and 5: %+v %+v; want line 60 and line 48 inlined at row 4", site, first)
	}
	if end := bytes.IndexByte(s.Str[first.FuncName:], 0); string(s.Str[first.FuncName:int(first.FuncName)+end]) !=
		"_ZN70_INTERNAL_48_tmpxft_00000012_00000000_7_inlines_loops_cpp1_ii_d1d8cd7d9f4_inlineEv" {
		t.Errorf("function name at %d: %q", first.FuncName, s.Str[first.FuncName:])
	}
}

// cubinDir is ../shared from the package directory.
const cubinDir = "../../shared"
