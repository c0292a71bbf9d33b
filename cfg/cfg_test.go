package cfg

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"bloop/isa"
	"bloop/loader"
	"bloop/structure"
)

// blockShape is a compact, comparable view of a graph.
type blockShape struct {
	Start, End uint64
	Succs      []uint64
}

func shape(g *Graph) []blockShape {
	var out []blockShape
	for _, b := range g.Blocks {
		s := blockShape{Start: b.Start, End: b.End}
		for _, x := range b.Succs {
			s.Succs = append(s.Succs, g.Blocks[x].Start)
		}
		out = append(out, s)
	}
	return out
}

func le32(v uint32) []byte { b := make([]byte, 4); binary.LittleEndian.PutUint32(b, v); return b }

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestBuildAMD64(t *testing.T) {
	const base = 0x1000
	// A PIC jump table at 0x2000 with offsets relative to the table.
	picTable := cat(le32(uint32(0x1020-0x2000+(1<<32))), le32(uint32(0x1024-0x2000+(1<<32))), le32(uint32(0x1028-0x2000+(1<<32))))
	absTable := make([]byte, 16)
	binary.LittleEndian.PutUint64(absTable, 0x1018)
	binary.LittleEndian.PutUint64(absTable[8:], 0x101c)
	tests := []struct {
		name  string
		code  []byte
		data  []byte
		noret map[uint64]bool
		want  []blockShape
	}{
		{
			name: "straight line with endbr64",
			code: []byte{0xf3, 0x0f, 0x1e, 0xfa, 0x90, 0xc3},
			want: []blockShape{{0x1000, 0x1006, nil}},
		},
		{
			name: "loop: dec; jne back; ret",
			// 1000: ff c9 dec ecx ; 1002: 75 fc jne 1000 ; 1004: c3
			code: []byte{0xff, 0xc9, 0x75, 0xfc, 0xc3},
			want: []blockShape{{0x1000, 0x1004, []uint64{0x1000, 0x1004}}, {0x1004, 0x1005, nil}},
		},
		{
			name: "call to a noreturn function ends the block",
			// 1000: e8 0b 00 00 00 call 1010 ; 1005: c3 (unreachable)
			code:  []byte{0xe8, 0x0b, 0x00, 0x00, 0x00, 0xc3},
			noret: map[uint64]bool{0x1010: true},
			want:  []blockShape{{0x1000, 0x1005, nil}},
		},
		{
			name: "call that returns falls through",
			code: []byte{0xe8, 0x0b, 0x00, 0x00, 0x00, 0xc3},
			want: []blockShape{{0x1000, 0x1005, []uint64{0x1005}}, {0x1005, 0x1006, nil}},
		},
		{
			name: "tail call out of the procedure has no successor",
			code: []byte{0xe9, 0xfb, 0x0f, 0x00, 0x00}, // jmp 2000
			want: []blockShape{{0x1000, 0x1005, nil}},
		},
		{
			name: "ud2 ends its path, the other branch goes on",
			// 1000: 74 02 je 1004 ; 1002: 0f 0b ud2 ; 1004: c3
			code: []byte{0x74, 0x02, 0x0f, 0x0b, 0xc3},
			want: []blockShape{{0x1000, 0x1002, []uint64{0x1004, 0x1002}}, {0x1002, 0x1004, nil}, {0x1004, 0x1005, nil}},
		},
		{
			name: "undecodable byte stops its path but not the procedure",
			// 1000: 74 01 je 1003 ; 1002: 06 (invalid in 64-bit mode) ; 1003: c3
			code: []byte{0x74, 0x01, 0x06, 0xc3},
			want: []blockShape{{0x1000, 0x1002, []uint64{0x1003}}, {0x1003, 0x1004, nil}},
		},
		{
			name: "PIC jump table (gcc/clang -fPIC)",
			// 1000: 83 ff 02          cmp edi,2
			// 1003: 77 21             ja 1026 (inside padding: no block there is needed)
			// 1005: 48 8d 15 f4 0f 00 00 lea rdx,[rip+0xff4] -> 0x2000
			// 100c: 48 63 04 ba       movsxd rax,[rdx+rdi*4]
			// 1010: 48 01 d0          add rax,rdx
			// 1013: ff e0             jmp rax
			// 1015..101f: nops ; 1020: c3 ; 1024: c3 ; 1028: c3
			code: cat([]byte{0x83, 0xff, 0x02, 0x77, 0x23, 0x48, 0x8d, 0x15, 0xf4, 0x0f, 0x00, 0x00,
				0x48, 0x63, 0x04, 0xba, 0x48, 0x01, 0xd0, 0xff, 0xe0},
				[]byte{0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90},
				[]byte{0xc3, 0x90, 0x90, 0x90, 0xc3, 0x90, 0x90, 0x90, 0xc3}),
			data: picTable,
			want: []blockShape{
				{0x1000, 0x1005, []uint64{0x1028, 0x1005}},
				{0x1005, 0x1015, []uint64{0x1020, 0x1024, 0x1028}},
				{0x1020, 0x1021, nil}, {0x1024, 0x1025, nil}, {0x1028, 0x1029, nil},
			},
		},
		{
			name: "absolute jump table (non-PIC)",
			// 1000: 83 ff 01 cmp edi,1 ; 1003: 77 13 ja 1018
			// 1005: ff 24 fd 00 20 00 00 jmp [rdi*8+0x2000]
			// 100c..1017 nops ; 1018: c3 ; 1019..101b nop ; 101c: c3
			code: cat([]byte{0x83, 0xff, 0x01, 0x77, 0x13, 0xff, 0x24, 0xfd, 0x00, 0x20, 0x00, 0x00},
				make90(12), []byte{0xc3, 0x90, 0x90, 0x90, 0xc3}),
			data: absTable,
			want: []blockShape{
				{0x1000, 0x1005, []uint64{0x1018, 0x1005}},
				{0x1005, 0x100c, []uint64{0x1018, 0x101c}},
				{0x1018, 0x1019, nil}, {0x101c, 0x101d, nil},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			exec := []*loader.Section{{Name: ".text", Addr: base, Data: tc.code}}
			var data []*loader.Section
			if tc.data != nil {
				data = append(data, &loader.Section{Name: ".rodata", Addr: 0x2000, Data: tc.data})
			}
			img := loader.FromSections(loader.AMD64, exec, data)
			g, err := Build(img, base, base, base+uint64(len(tc.code)), Options{NoReturn: func(a uint64) bool { return tc.noret[a] }})
			if err != nil {
				t.Fatal(err)
			}
			if got := shape(g); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("blocks\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func make90(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 0x90
	}
	return b
}

// TestBuildGarbage checks that random bytes never hang or panic the builder.
func TestBuildGarbage(t *testing.T) {
	seed := uint32(1)
	for round := 0; round < 200; round++ {
		code := make([]byte, 512)
		for i := range code {
			seed = seed*1664525 + 1013904223
			code[i] = byte(seed >> 24)
		}
		img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}}, nil)
		g, err := Build(img, 0x1000, 0x1000, 0x1200, Options{})
		if err != nil {
			continue
		}
		for _, b := range g.Blocks {
			if b.Start < 0x1000 || b.End > 0x1200 || b.End <= b.Start {
				t.Fatalf("round %d: block [%#x,%#x) outside the procedure", round, b.Start, b.End)
			}
		}
	}
}

// TestOverlappingInstructions: code that jumps into the middle of an
// instruction (vmlinux's retbleed_untrain_ret: the immediate of a test is
// a ret). Each instruction owns its bytes up to the next one's start.
func TestOverlappingInstructions(t *testing.T) {
	// 1000: f6 c3 cc   test $0xcc,%bl   (1001: c3 ret)
	// 1003: 0f ae e8   lfence
	// 1006: eb f9      jmp 1001
	code := []byte{0xf6, 0xc3, 0xcc, 0x0f, 0xae, 0xe8, 0xeb, 0xf9}
	img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}}, nil)
	g, err := Build(img, 0x1000, 0x1000, 0x1008, Options{})
	if err != nil {
		t.Fatal(err)
	}
	spans := map[uint64]structure.Range{}
	for _, b := range g.Blocks {
		for i := range b.Insts {
			spans[b.Insts[i].Addr] = b.Insts[i].Span()
		}
	}
	want := map[uint64]structure.Range{
		0x1000: {Lo: 0x1000, Hi: 0x1001}, 0x1001: {Lo: 0x1001, Hi: 0x1002},
		0x1003: {Lo: 0x1003, Hi: 0x1006}, 0x1006: {Lo: 0x1006, Hi: 0x1008},
	}
	if !reflect.DeepEqual(spans, want) {
		t.Errorf("spans %v, want %v", spans, want)
	}
	if g.Overlaps != 1 {
		t.Errorf("overlaps %d, want 1", g.Overlaps)
	}
}

func TestEntryDoesNotDecode(t *testing.T) {
	img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: []byte{0x06, 0xc3}}}, nil)
	if _, err := Build(img, 0x1000, 0x1000, 0x1002, Options{}); !errors.Is(err, ErrEntry) {
		t.Errorf("error %v, want ErrEntry", err)
	}
}

// TestUnboundedTableStopsAtData: a table with no bounds check (a switch
// over an enum) is read while its entries point at instruction starts of
// the procedure; data after it that points inside an instruction ends it.
func TestUnboundedTableStopsAtData(t *testing.T) {
	// 1000: 48 8d 15 f9 0f 00 00  lea 0x2000(%rip),%rdx
	// 1007: 48 63 04 ba           movslq (%rdx,%rdi,4),%rax
	// 100b: 48 01 d0              add %rdx,%rax
	// 100e: ff e0                 jmp *%rax
	// 1010: b8 01 00 00 00        mov $1,%eax ; 1015: c3
	// 1016: b8 02 00 00 00        mov $2,%eax ; 101b: c3
	code := []byte{0x48, 0x8d, 0x15, 0xf9, 0x0f, 0x00, 0x00, 0x48, 0x63, 0x04, 0xba, 0x48, 0x01, 0xd0, 0xff, 0xe0,
		0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3, 0xb8, 0x02, 0x00, 0x00, 0x00, 0xc3}
	rel := func(target uint64) []byte { return le32(uint32(int64(target) - 0x2000)) }
	// Two real entries, then data that would point at 0x1011 (inside the
	// first mov) and 0x1016.
	table := cat(rel(0x1010), rel(0x1016), rel(0x1011), rel(0x1016))
	img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}},
		[]*loader.Section{{Name: ".rodata", Addr: 0x2000, Data: table}})
	g, err := Build(img, 0x1000, 0x1000, 0x101c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	jmp := g.Blocks[0].Last()
	if !reflect.DeepEqual(jmp.Table, []uint64{0x1010, 0x1016}) {
		t.Errorf("table %x, want [1010 1016]", jmp.Table)
	}
	if g.Overlaps != 0 {
		t.Errorf("%d overlapping instructions", g.Overlaps)
	}
}

// TestTableO0 covers gcc -O0's PIC jump table, whose index is scaled by a
// lea of its own (libstdc++'s debug build has 30 such switches; unresolved,
// their cases fell out of the loops around them).
func TestTableO0(t *testing.T) {
	code := cat(
		[]byte{0x83, 0xf8, 0x02},                      // 1000: cmp $2,%eax
		[]byte{0x77, 0x2e},                            // 1003: ja 1033
		[]byte{0x89, 0xc0},                            // 1005: mov %eax,%eax
		[]byte{0x48, 0x8d, 0x14, 0x85, 0, 0, 0, 0},    // 1007: lea 0x0(,%rax,4),%rdx
		[]byte{0x48, 0x8d, 0x05}, le32(0x2000-0x1016), // 100f: lea 0x2000(%rip),%rax
		[]byte{0x8b, 0x04, 0x02},                      // 1016: mov (%rdx,%rax,1),%eax
		[]byte{0x48, 0x98},                            // 1019: cltq
		[]byte{0x48, 0x8d, 0x15}, le32(0x2000-0x1022), // 101b: lea 0x2000(%rip),%rdx
		[]byte{0x48, 0x01, 0xd0},       // 1022: add %rdx,%rax
		[]byte{0xff, 0xe0},             // 1025: jmp *%rax
		[]byte{0xb8, 1, 0, 0, 0, 0xc3}, // 1027: mov $1,%eax; ret
		[]byte{0xb8, 2, 0, 0, 0, 0xc3}, // 102d: mov $2,%eax; ret
		[]byte{0xc3},                   // 1033: ret
	)
	rel := func(target uint64) []byte { return le32(uint32(int64(target) - 0x2000)) }
	// Three entries (cmp $2; ja), then one the bound keeps out.
	table := cat(rel(0x1027), rel(0x102d), rel(0x1033), rel(0x1028))
	img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}},
		[]*loader.Section{{Name: ".rodata", Addr: 0x2000, Data: table}})
	g, err := Build(img, 0x1000, 0x1000, 0x1034, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range g.Blocks {
		if jmp := b.Last(); jmp.Kind == isa.IndirectJump {
			if !reflect.DeepEqual(jmp.Table, []uint64{0x1027, 0x102d, 0x1033}) {
				t.Errorf("table %x, want [1027 102d 1033]", jmp.Table)
			}
			return
		}
	}
	t.Error("no indirect jump")
}
