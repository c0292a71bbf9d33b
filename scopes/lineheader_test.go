package scopes

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"bloop/cfg"
	"bloop/havlak"
	"bloop/isa"
	"bloop/loader"
	"bloop/structure"
)

// TestLineZeroHeaderInInlinedCall: hpcstruct's findLoopHeader places a
// loop by the inline depth of its exit conditions, and a line-0 exit
// gives no line: the loop goes down the chain of inlined calls until a
// level holds an exit, and takes the smallest positive line of the exits
// at that level or, for an exit deeper, of its call site there. So a
// retry loop inside an inlined atomicAdd (k.cu:7 calls it, a.h holds its
// code) is the call's loop, on line 0 when every exit row there has line
// 0; and the same loop whose line-0 exit row is not code of the call is
// the procedure's loop, on the call's line (its other exit, inside the
// call, seen at its call site): the form issue 40's sm_87 cubin has from
// hpcstruct where bloop wrote the call's loop on line 0. Which of the two
// a cubin gives is the inline context of that line-0 row, not a
// placement rule.
func TestLineZeroHeaderInInlinedCall(t *testing.T) {
	// Pascal words: a kernel k whose loop [0x1010, 0x1038) leaves through
	// @P1 BRA at 0x1018 (exit 2) and @!P0 BRA at 0x1030 (exit 1: back to
	// the head, or on out).
	words := []uint64{
		p6Ctl, p6Nop, p6Nop, p6Bra(1, 0x1018, 0x1048), // 0x1000-0x1018
		p6Ctl, p6Nop, p6Bra(8, 0x1030, 0x1010), p6Nop, // 0x1020-0x1038
		p6Ctl, p6Exit, p6Nop, p6Nop, // 0x1040-0x1058
	}
	lines := func(exit1, exit2 int, file1 string) []loader.LineRow {
		return []loader.LineRow{
			{Addr: 0x1000, End: 0x1010, File: "/src/k.cu", Line: 5},
			{Addr: 0x1010, End: 0x1018, File: "/src/a.h", Line: 20},
			{Addr: 0x1018, End: 0x1020, File: "/src/a.h", Line: exit2},
			{Addr: 0x1020, End: 0x1030, File: "/src/a.h", Line: 22},
			{Addr: 0x1030, End: 0x1038, File: file1, Line: exit1},
			{Addr: 0x1038, End: 0x1060, File: "/src/k.cu", Line: 8},
		}
	}
	call := []structure.Range{{Lo: 0x1010, Hi: 0x1038}}
	for _, tc := range []struct {
		name   string
		rows   []loader.LineRow
		inCall []structure.Range // the inlined call's code
		want   string            // kinds and lines from the procedure down to the loop (a call is two aliens: its site, its callee)
	}{
		{"lined exits in the call", lines(19, 21, "/src/a.h"), call, "P5 A7 A19 L19"},
		{"a line-0 exit in the call", lines(0, 21, "/src/a.h"), call, "P5 A7 A21 L21"},
		{"only line-0 exits in the call", lines(0, 0, "/src/a.h"), call, "P5 A7 A0 L0"},
		{"a line-0 exit of the procedure", lines(0, 21, "/src/k.cu"), call[:0:0], "P0 L7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.inCall
			if len(in) == 0 { // the call's code without exit 1
				in = []structure.Range{{Lo: 0x1010, Hi: 0x1030}}
			}
			if got := placeLoop(t, words, tc.rows, in); got != tc.want {
				t.Errorf("loop at %q, want %q", got, tc.want)
			}
		})
	}
}

// placeLoop builds the procedure of Pascal code words at 0x1000 with its
// line rows and one inlined call (k.cu:7, atomicAdd) over inCall in
// compat mode, and says where its one loop is.
func placeLoop(t *testing.T, words []uint64, rows []loader.LineRow, inCall []structure.Range) string {
	t.Helper()
	const lo = 0x1000
	var code []byte
	for _, w := range words {
		code = binary.LittleEndian.AppendUint64(code, w)
	}
	hi := lo + uint64(len(code))
	img := loader.FromSections(loader.CUDA, []*loader.Section{{Name: ".text.k", Addr: lo, Data: code}}, nil)
	img.Lines, img.InstSize, img.SM = loader.NewLineTable(rows), 8, 62
	g, err := cfg.Build(img, lo, lo, hi, cfg.Options{Arch: isa.BindCUDA(62, isa.CUDACode{Mem: img, Procs: [][2]uint64{{lo, hi}}})})
	if err != nil {
		t.Fatal(err)
	}
	succs := g.Succs()
	call := &loader.Inline{Callee: &loader.Callee{Name: "atomicAdd", LinkName: "atomicAdd"}, CallFile: "/src/k.cu", CallLine: 7, CallIndex: -1, Ranges: inCall}
	sub := &loader.Subprogram{Ranges: []structure.Range{{Lo: lo, Hi: hi}}, EntryPC: lo, Inlines: []*loader.Inline{call}}
	p, _ := BuildProc(Input{Img: img, Func: &loader.Func{Name: "k", Addr: lo, End: hi}, Sub: sub,
		Graph: g, Forest: havlak.Find(len(succs), g.Entry, succs), Hpcstruct: true, Device: "NVIDIA sm_62"})
	var path []string
	var find func(s *structure.Scope) bool
	find = func(s *structure.Scope) bool {
		path = append(path, kindLetter(s)+strconv.Itoa(s.Line))
		if s.Kind == structure.Loop {
			return true
		}
		for _, c := range s.Children {
			if find(c) {
				return true
			}
		}
		path = path[:len(path)-1]
		return false
	}
	if !find(p) {
		return "no loop"
	}
	return strings.Join(path, " ")
}

func kindLetter(s *structure.Scope) string {
	switch s.Kind {
	case structure.Proc:
		return "P"
	case structure.Loop:
		return "L"
	case structure.Alien:
		return "A"
	}
	return "?"
}

// Pascal SASS words (isa/sass.go's fields): a bundle's scheduling word,
// an instruction without control flow, EXIT, and BRA under predicate pred
// (7 PT, 8 !P0) from at to to.
const (
	p6Ctl  = 0x001fbc00fde007ef
	p6Nop  = 0x50b0000000070f00
	p6Exit = 0xe30000000007000f
)

func p6Bra(pred, at, to uint64) uint64 { return 0xe24<<52 | (to-at-8)&0xffffff<<20 | pred<<16 | 0xf }
