package cfg

import (
	"reflect"
	"testing"

	"bloop/havlak"
	"bloop/loader"
)

// TestDyninstSuccs: Dyninst lists a conditional branch's fall-through
// before its taken edge and a jump table's targets by address; Succs keeps
// the decoder's order (taken edge first, the table's order).
func TestDyninstSuccs(t *testing.T) {
	// A PIC table at 0x2000 listing its cases downwards.
	table := cat(le32(uint32(0x1028-0x2000+(1<<32))), le32(uint32(0x1020-0x2000+(1<<32))), le32(uint32(0x1024-0x2000+(1<<32))))
	for _, tc := range []struct {
		name       string
		code, data []byte
		succs, dyn [][]uint64 // successors' starts per block
	}{
		{
			name: "je: fall-through first",
			// 1000: 74 02 je 1004 ; 1002: 90 nop ; 1003: 90 ; 1004: c3
			code:  []byte{0x74, 0x02, 0x90, 0x90, 0xc3},
			succs: [][]uint64{{0x1004, 0x1002}, {0x1004}, nil},
			dyn:   [][]uint64{{0x1002, 0x1004}, {0x1004}, nil},
		},
		{
			name: "jump table: ascending targets",
			// as TestBuildAMD64's PIC table, with cases 1028, 1020, 1024
			code: cat([]byte{0x83, 0xff, 0x02, 0x77, 0x23, 0x48, 0x8d, 0x15, 0xf4, 0x0f, 0x00, 0x00,
				0x48, 0x63, 0x04, 0xba, 0x48, 0x01, 0xd0, 0xff, 0xe0},
				make90(11), []byte{0xc3, 0x90, 0x90, 0x90, 0xc3, 0x90, 0x90, 0x90, 0xc3}),
			data:  table,
			succs: [][]uint64{{0x1028, 0x1005}, {0x1028, 0x1020, 0x1024}, nil, nil, nil},
			dyn:   [][]uint64{{0x1005, 0x1028}, {0x1020, 0x1024, 0x1028}, nil, nil, nil},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var data []*loader.Section
			if tc.data != nil {
				data = append(data, &loader.Section{Name: ".rodata", Addr: 0x2000, Data: tc.data})
			}
			img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: tc.code}}, data)
			g, err := Build(img, 0x1000, 0x1000, 0x1000+uint64(len(tc.code)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			starts := func(lists [][]int) [][]uint64 {
				out := make([][]uint64, len(lists))
				for i, l := range lists {
					for _, s := range l {
						out[i] = append(out[i], g.Blocks[s].Start)
					}
				}
				return out
			}
			if got := starts(g.Succs()); !reflect.DeepEqual(got, tc.succs) {
				t.Errorf("Succs %x, want %x", got, tc.succs)
			}
			if got := starts(g.DyninstSuccs()); !reflect.DeepEqual(got, tc.dyn) {
				t.Errorf("DyninstSuccs %x, want %x", got, tc.dyn)
			}
		})
	}
}

// TestDyninstOrderNesting: in an irreducible region the search order
// decides which entry heads the outer loop. A two-state machine entered in
// either state (irred.c's state_machine): taken edges first, the search
// reaches state b first and nests state a's loop inside it; Dyninst's
// order reaches state a first, and state b's loop is the inner one, as
// hpcstruct writes it.
func TestDyninstOrderNesting(t *testing.T) {
	code := []byte{
		0x85, 0xd2, // 1000: test edx,edx
		0x74, 0x0a, // 1002: je 100e (state b)
		0xff, 0xc8, // 1004: state a: dec eax
		0x74, 0x12, // 1006: je 101a
		0xa8, 0x04, // 1008: test al,4
		0x75, 0xf8, // 100a: jne 1004
		0xeb, 0x00, // 100c: jmp 100e
		0xff, 0xc9, // 100e: state b: dec ecx
		0x74, 0x08, // 1010: je 101a
		0xa8, 0x02, // 1012: test al,2
		0x75, 0xf8, // 1014: jne 100e
		0xeb, 0xec, // 1016: jmp 1004
		0x90, 0x90, // 1018
		0xc3, // 101a: ret
	}
	img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}}, nil)
	g, err := Build(img, 0x1000, 0x1000, 0x1000+uint64(len(code)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		succs        [][]int
		outer, inner uint64
	}{
		{"decoder order", g.Succs(), 0x100e, 0x1004},
		{"Dyninst order", g.DyninstSuccs(), 0x1004, 0x100e},
	} {
		f := havlak.Find(len(g.Blocks), g.Entry, tc.succs)
		if len(f.Top) != 1 || len(f.Top[0].Children) != 1 {
			t.Fatalf("%s: want one loop nested in another, got %d top-level loops", tc.name, len(f.Top))
		}
		outer, inner := f.Top[0], f.Top[0].Children[0]
		if got := [2]uint64{g.Blocks[outer.Header].Start, g.Blocks[inner.Header].Start}; got != [2]uint64{tc.outer, tc.inner} {
			t.Errorf("%s: outer, inner headers %x, want %x %x", tc.name, got, tc.outer, tc.inner)
		}
		if !outer.Irreducible || inner.Irreducible {
			t.Errorf("%s: irreducible outer %v inner %v, want true false", tc.name, outer.Irreducible, inner.Irreducible)
		}
	}
}

// TestDyninstForeignTable: glibc's _authenticate jumps through a table to
// the entries of other procedures. bloop takes those jumps for tail calls
// (no edges); Dyninst 12.3 parses the code as the jumping procedure's own
// (Oracle.Foreign), an entry it reaches so is Continued (that procedure
// is written with its gaps only), and an entry into another procedure's
// middle (__strcasecmp_l_sse2's table read past its end) parses that code
// too without claiming the procedure.
func TestDyninstForeignTable(t *testing.T) {
	code := cat([]byte{
		0x48, 0x63, 0x47, 0x18, // 1000: movslq 0x18(%rdi),%rax
		0x83, 0xf8, 0x02, // 1004: cmp $2,%eax
		0x76, 0x01, // 1007: jbe 100a
		0xc3,                                     // 1009: ret
		0x48, 0x8d, 0x15, 0xef, 0x0f, 0x00, 0x00, // 100a: lea 0x2000(%rip),%rdx
		0xff, 0x24, 0xc2, // 1011: jmp *(%rdx,%rax,8)
	}, make90(12), // 1014
		[]byte{0x90, 0xc3}, make90(14), // 1020: f1: nop; ret
		[]byte{0x31, 0xc0, 0xc3}, make90(13)) // 1030: f2: xor %eax,%eax; ret
	var table []byte
	for _, a := range []uint64{0x1020, 0x1030, 0x1032} {
		table = append(table, le32(uint32(a))...)
		table = append(table, 0, 0, 0, 0)
	}
	img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}},
		[]*loader.Section{{Name: ".data.rel.ro", Addr: 0x2000, Data: table}})
	foreign := func(a uint64) (uint64, uint64, bool) {
		switch {
		case a >= 0x1020 && a < 0x1030:
			return 0x1020, 0x1030, true
		case a >= 0x1030 && a < 0x1040:
			return 0x1030, 0x1040, true
		}
		return 0, 0, false
	}
	starts := func(g *Graph) []uint64 {
		var out []uint64
		for _, b := range g.Blocks {
			out = append(out, b.Start)
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		opt       Options
		blocks    []uint64
		succs     []uint64 // of the jump's block
		continued []uint64
	}{
		{"bloop: tail calls", Options{Procs: oracle{foreign: foreign}}, []uint64{0x1000, 0x1009, 0x100a}, nil, nil},
		{"Dyninst", Options{Procs: oracle{foreign: foreign}, Dyninst: &Dyninst{Tables: true}},
			[]uint64{0x1000, 0x1009, 0x100a, 0x1020, 0x1030, 0x1032}, []uint64{0x1020, 0x1030, 0x1032},
			[]uint64{0x1020, 0x1030}},
	} {
		g, err := Build(img, 0x1000, 0x1000, 0x1014, tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		if got := starts(g); !reflect.DeepEqual(got, tc.blocks) {
			t.Errorf("%s: blocks %x, want %x", tc.name, got, tc.blocks)
		}
		var succs []uint64
		for _, s := range g.Blocks[2].Succs {
			succs = append(succs, g.Blocks[s].Start)
		}
		if !reflect.DeepEqual(succs, tc.succs) {
			t.Errorf("%s: the jump's successors %x, want %x", tc.name, succs, tc.succs)
		}
		if !reflect.DeepEqual(g.Continued, tc.continued) {
			t.Errorf("%s: Continued %x, want %x", tc.name, g.Continued, tc.continued)
		}
	}
}
