package pipeline

import (
	"reflect"
	"testing"

	"bloop/loader"
	"bloop/scopes"
	"bloop/structure"
)

// handMade is an image of hand-written code: one procedure per symbol,
// one line row per byte range.
func handMade(code []byte, funcs []*loader.Func, rows []loader.LineRow) *loader.Image {
	img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}}, nil)
	img.Funcs = funcs
	img.Lines = loader.NewLineTable(rows)
	return img
}

func stmtRanges(p *structure.Scope) map[int][]structure.Range {
	out := map[int][]structure.Range{}
	structure.Walk(p, func(s *structure.Scope) {
		if s.Kind == structure.Stmt {
			out[s.Line] = append(out[s.Line], s.Ranges...)
		}
	})
	return out
}

// TestProblemsKeepProcedures: a procedure whose entry does not decode, and
// one that jumps into the middle of an instruction, are still written,
// with their statements, and the problem is reported with its kind.
func TestProblemsKeepProcedures(t *testing.T) {
	code := []byte{
		// 1000 stub: 0f 01 c1 would be vmcall; 06 is invalid in 64-bit mode
		0x06, 0x90, 0xc3, 0xcc,
		// 1004 untrain: test $0xcc,%bl (1005: ret); lfence; jmp 1005
		0xf6, 0xc3, 0xcc, 0x0f, 0xae, 0xe8, 0xeb, 0xf9,
	}
	funcs := []*loader.Func{
		{Name: "stub", Aliases: []string{"stub"}, Addr: 0x1000, End: 0x1004, Sized: true},
		{Name: "untrain", Aliases: []string{"untrain"}, Addr: 0x1004, End: 0x100c, Sized: true},
	}
	rows := []loader.LineRow{
		{Addr: 0x1000, End: 0x1002, File: "/s/a.S", Line: 10},
		{Addr: 0x1002, End: 0x1004, File: "/s/a.S", Line: 11},
		{Addr: 0x1004, End: 0x100c, File: "/s/a.S", Line: 20},
	}
	mod, probs := Analyze(handMade(code, funcs, rows), Options{Workers: 2, Engine: DWARF})
	got := map[string][]string{}
	for _, p := range probs {
		got[p.Func] = append(got[p.Func], p.Kind)
	}
	wantKinds := map[string][]string{"stub": {KindEntry}, "untrain": {KindOverlap}}
	if !reflect.DeepEqual(got, wantKinds) {
		t.Errorf("problems %v, want %v", got, wantKinds)
	}
	if len(mod.Files) != 1 || len(mod.Files[0].Procs) != 2 {
		t.Fatalf("want both procedures written, got %+v", mod.Files)
	}
	stub, untrain := mod.Files[0].Procs[0], mod.Files[0].Procs[1]
	if want := map[int][]structure.Range{10: {{Lo: 0x1000, Hi: 0x1002}}, 11: {{Lo: 0x1002, Hi: 0x1004}}}; !reflect.DeepEqual(stmtRanges(stub), want) {
		t.Errorf("stub statements %v, want %v (from the line table)", stmtRanges(stub), want)
	}
	// The ret at 0x1005 has its own byte; the test keeps 0x1004 only.
	if want := map[int][]structure.Range{20: {{Lo: 0x1004, Hi: 0x1006}, {Lo: 0x1007, Hi: 0x100c}}}; !reflect.DeepEqual(stmtRanges(untrain), want) {
		t.Errorf("untrain statements %v, want %v", stmtRanges(untrain), want)
	}
}

func TestRepairProc(t *testing.T) {
	s := func(line int, rs ...structure.Range) *structure.Scope {
		return &structure.Scope{Kind: structure.Stmt, Line: line, Ranges: rs}
	}
	r := func(lo, hi uint64) structure.Range { return structure.Range{Lo: lo, Hi: hi} }
	tests := []struct {
		name  string
		stmts []*structure.Scope
		fixed int
		want  map[int][]structure.Range
	}{
		{"valid", []*structure.Scope{s(1, r(0x10, 0x14)), s(2, r(0x14, 0x18))}, 0,
			map[int][]structure.Range{1: {r(0x10, 0x14)}, 2: {r(0x14, 0x18)}}},
		{"a byte in two statements stays with the first", []*structure.Scope{s(1, r(0x10, 0x16)), s(2, r(0x14, 0x18))}, 1,
			map[int][]structure.Range{1: {r(0x10, 0x16)}, 2: {r(0x16, 0x18)}}},
		{"outside the procedure is cut", []*structure.Scope{s(1, r(0x0c, 0x12)), s(2, r(0x1e, 0x24))}, 2,
			map[int][]structure.Range{1: {r(0x10, 0x12)}, 2: {r(0x1e, 0x20)}}},
		{"a statement left empty is removed", []*structure.Scope{s(1, r(0x10, 0x18)), s(2, r(0x12, 0x14))}, 1,
			map[int][]structure.Range{1: {r(0x10, 0x18)}}},
	}
	for _, tc := range tests {
		loop := &structure.Scope{Kind: structure.Loop, Children: tc.stmts[1:]}
		p := &structure.Scope{Kind: structure.Proc, Children: []*structure.Scope{tc.stmts[0], loop}}
		in := scopes.Input{Func: &loader.Func{Addr: 0x10, End: 0x20}}
		if n := repairProc(in, p); n != tc.fixed {
			t.Errorf("%s: %d ranges repaired, want %d", tc.name, n, tc.fixed)
		}
		if got := stmtRanges(p); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: statements %v, want %v", tc.name, got, tc.want)
		}
	}
}
