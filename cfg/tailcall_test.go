package cfg

import (
	"debug/elf"
	"reflect"
	"testing"

	"bloop/isa"
	"bloop/loader"
)

// TestDyninstTailCalls: with Dyninst.TailCalls, a jump back to the
// procedure's entry is no edge (Dyninst takes it for a tail call) after the
// end of a frame on x86-64, or wherever the entry is called; other jumps,
// and a stack release that a call returns to, keep theirs.
func TestDyninstTailCalls(t *testing.T) {
	amd := func(code []byte) *loader.Image {
		return loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}}, nil)
	}
	// 1000: push %rbx; 1001: test %edi,%edi; 1003: je 100a;
	// 1005: <x>; ... jmp 1000; 100a: pop %rbx; ret
	popJmp := []byte{0x53, 0x85, 0xff, 0x74, 0x05, 0x5b, 0x90, 0xeb, 0xf7, 0x90, 0x5b, 0xc3}
	// The same with 1005: mov %ebx,%eax (not the end of a frame).
	movJmp := []byte{0x53, 0x85, 0xff, 0x74, 0x05, 0x89, 0xd8, 0xeb, 0xf7, 0x90, 0x5b, 0xc3}
	// 1000: sub $8,%rsp; 1004: call 1012; 1009: add $8,%rsp (a call returns
	// to it); 100d: jmp 1000; 100f: nop; 1010: nop; 1011: ret; 1012: ret
	addAfterCall := []byte{0x48, 0x83, 0xec, 0x08, 0xe8, 0x09, 0, 0, 0, 0x48, 0x83, 0xc4, 0x08, 0xeb, 0xf1, 0x90, 0x90, 0xc3, 0xc3}
	// 1000: test %edi,%edi; 1002: je 100b; 1004: add $8,%rsp; 1008: jmp
	// 1000; 100a: nop; 100b: ret
	addJmp := []byte{0x85, 0xff, 0x74, 0x07, 0x48, 0x83, 0xc4, 0x08, 0xeb, 0xf6, 0x90, 0xc3}
	// 1000: test; 1002: jne 1000 (a loop at the entry); 1004: ret
	condLoop := []byte{0x85, 0xff, 0x75, 0xfc, 0xc3}
	loopAt := func(g *Graph) bool {
		for _, b := range g.Blocks {
			for _, s := range b.Succs {
				if g.Blocks[s].Start == 0x1000 {
					return true
				}
			}
		}
		return false
	}
	called := func(t uint64) bool { return t == 0x1000 }
	for _, tc := range []struct {
		name   string
		code   []byte
		hi     uint64
		dyn    bool
		called func(uint64) bool
		edge   bool // an edge back to the entry
	}{
		{"pop before the jump, default mode", popJmp, 0x100c, false, nil, true},
		{"pop (nop skipped) before the jump", popJmp, 0x100c, true, nil, false},
		{"mov before the jump", movJmp, 0x100c, true, nil, true},
		{"mov before the jump, entry called", movJmp, 0x100c, true, called, false},
		{"add to SP before the jump", addJmp, 0x100c, true, nil, false},
		{"add to SP a call returns to", addAfterCall, 0x1013, true, nil, true},
		{"conditional jump to the entry", condLoop, 0x1005, true, nil, true},
		{"conditional jump to a called entry", condLoop, 0x1005, true, called, false},
	} {
		g, err := Build(amd(tc.code), 0x1000, 0x1000, tc.hi, Options{Procs: oracle{called: tc.called}, Dyninst: &Dyninst{TailCalls: tc.dyn, Decode: isa.Dyninst12For(elf.EM_X86_64)}})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := loopAt(g); got != tc.edge {
			t.Errorf("%s: edge to the entry %v, want %v: %+v", tc.name, got, tc.edge, shape(g))
		}
	}

	// aarch64 has no epilogue test: only a call to the entry makes its
	// jump back a tail call (stl-gcc12-O2's recursive __merge_adaptive).
	code := cat(
		le32(0xa9bf7bfd), // 1000: stp x29, x30, [sp, #-16]!
		le32(0xa8c17bfd), // 1004: ldp x29, x30, [sp], #16
		le32(0xb4000040), // 1008: cbz x0, 1010
		le32(0x17fffffd), // 100c: b 1000
		le32(0xd65f03c0), // 1010: ret
	)
	img := loader.FromSections(loader.ARM64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}}, nil)
	for _, tc := range []struct {
		called func(uint64) bool
		edge   bool
	}{{nil, true}, {called, false}} {
		g, err := Build(img, 0x1000, 0x1000, 0x1014, Options{Procs: oracle{called: tc.called}, Dyninst: &Dyninst{TailCalls: true}})
		if err != nil {
			t.Fatal(err)
		}
		if got := loopAt(g); got != tc.edge {
			t.Errorf("arm64, called %v: edge to the entry %v, want %v", tc.called != nil, got, tc.edge)
		}
	}
}

// TestFallOutPadding: on x86-64 a walk that falls out of its extent after
// a call (through a PLT stub whose callee Dyninst does not know never
// returns) runs through the padding, no procedure's, into the next
// procedure.
func TestFallOutPadding(t *testing.T) {
	code := []byte{
		0xe8, 0x0b, 0, 0, 0, // 1000: call 1010 (stub)
		0x0f, 0x1f, 0x00, // 1005: nopl (%rax)  padding, no procedure's
		0x90,       // 1008: nop              next procedure
		0x85, 0xff, // 1009: test %edi,%edi
		0x75, 0xfc, // 100b: jne 1009
		0xc3,       // 100d: ret
		0x90, 0x90, // 100e
		0xc3, // 1010: the stub
	}
	img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}}, nil)
	region := func(t uint64, callNext bool) (uint64, uint64, bool) {
		switch {
		case callNext && t == 0x1005:
			return 0x1005, 0x1008, true
		case callNext && t >= 0x1008 && t < 0x100e:
			return 0x1008, 0x100e, true
		}
		return 0, 0, false
	}
	for _, tc := range []struct {
		fallOut   bool
		continued []uint64
		blocks    int
	}{{false, nil, 1}, {true, []uint64{0x1005, 0x1008}, 4}} {
		g, err := Build(img, 0x1000, 0x1000, 0x1005, Options{Procs: oracle{region: region}, Dyninst: &Dyninst{FallOut: tc.fallOut}})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g.Continued, tc.continued) || len(g.Blocks) != tc.blocks {
			t.Errorf("FallOut %v: continued %x, blocks %+v", tc.fallOut, g.Continued, shape(g))
		}
	}
}

// TestAnyWord: with AnyWord a ppc64 parse that goes on after a call (to a
// stub whose callee is not known never to return) runs through the
// traceback table after it, as Dyninst 12.3's decoder takes every word for
// an instruction; without it the words that do not decode end the walk.
func TestAnyWord(t *testing.T) {
	code := words(
		0x48000011, // 1000: bl 1010
		0xe8410018, // 1004: ld r2,24(r1)
		0x00000000, // 1008: traceback table
		0x00000380, // 100c
		0x4e800020, // 1010: blr (the callee)
	)
	img := loader.FromSections(loader.PPC64LE, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}}, nil)
	for _, tc := range []struct {
		any bool
		end uint64
	}{{false, 0x1008}, {true, 0x1010}} {
		g, err := Build(img, 0x1000, 0x1000, 0x1010, Options{Dyninst: &Dyninst{Decode: isa.Dyninst12{AnyWord: tc.any}}})
		if err != nil {
			t.Fatal(err)
		}
		if end := g.Blocks[len(g.Blocks)-1].End; end != tc.end || g.Undecodable != 0 {
			t.Errorf("AnyWord %v: code ends at %#x (undecodable %d), want %#x", tc.any, end, g.Undecodable, tc.end)
		}
	}
}
