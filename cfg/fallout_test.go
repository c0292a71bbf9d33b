package cfg

import (
	"debug/elf"
	"errors"
	"reflect"
	"testing"

	"bloop/isa"
	"bloop/loader"
)

// TestFallOut: with FallOut, a call that ends its procedure falls through
// into the next one, as Dyninst parses aarch64's _start into call_weak_fn,
// and the branches inside the procedure entered so are followed.
func TestFallOut(t *testing.T) {
	code := cat(
		le32(0xd503201f), // 1000: nop
		le32(0x94000400), // 1004: bl 2004 (abort@plt, not known not to return)
		le32(0xb4000060), // 1008: cbz x0, 1014          next procedure
		le32(0xd503201f), // 100c: nop
		le32(0x17fffffe), // 1010: b 1008
		le32(0xd65f03c0), // 1014: ret
	)
	img := loader.FromSections(loader.ARM64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}}, nil)
	region := func(t uint64, callNext bool) (uint64, uint64, bool) {
		if callNext && t >= 0x1008 && t < 0x1018 {
			return 0x1008, 0x1018, true
		}
		return 0, 0, false
	}
	for _, tc := range []struct {
		fallOut   bool
		want      []blockShape
		continued []uint64
	}{
		{false, []blockShape{{0x1000, 0x1008, nil}}, nil},
		{true, []blockShape{
			{0x1000, 0x1008, []uint64{0x1008}},
			{0x1008, 0x100c, []uint64{0x1014, 0x100c}},
			{0x100c, 0x1014, []uint64{0x1008}},
			{0x1014, 0x1018, nil},
		}, []uint64{0x1008}},
	} {
		g, err := Build(img, 0x1000, 0x1000, 0x1008, Options{Procs: oracle{region: region}, Dyninst: &Dyninst{FallOut: tc.fallOut}})
		if err != nil {
			t.Fatal(err)
		}
		if got := shape(g); !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(g.Continued, tc.continued) {
			t.Errorf("FallOut %v: blocks %+v continued %x\nwant %+v continued %x", tc.fallOut, got, g.Continued, tc.want, tc.continued)
		}
	}
}

// TestJumpInto: with JumpInto, a jump into the middle of another
// procedure continues the parse there, as Dyninst 12.3 parses glibc's
// __mempcpy_avx512_unaligned into __memmove_avx512_unaligned; a jump to
// that procedure's entry stays a tail call.
func TestJumpInto(t *testing.T) {
	code := cat(
		[]byte{0x48, 0x89, 0xf8}, // 1000: mov %rdi,%rax
		[]byte{0xeb, 0x0d},       // 1003: jmp 1012           (into the next procedure)
		make90(11),               // 1005: padding
		[]byte{0x90, 0x90},       // 1010: nop; nop           next procedure
		[]byte{0x85, 0xc0},       // 1012: test %eax,%eax
		[]byte{0x74, 0xfa},       // 1014: je 1010            (its entry: a tail call)
		[]byte{0x75, 0x02},       // 1016: jne 101a
		[]byte{0x90, 0x90},       // 1018: nop; nop
		[]byte{0xc3},             // 101a: ret
	)
	img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}}, nil)
	into := func(t uint64) (uint64, uint64, bool) {
		if t >= 0x1010 && t < 0x101b {
			return 0x1010, 0x101b, true
		}
		return 0, 0, false
	}
	for _, tc := range []struct {
		into func(uint64) (uint64, uint64, bool)
		want []blockShape
	}{
		{nil, []blockShape{{0x1000, 0x1005, nil}}},
		{into, []blockShape{
			{0x1000, 0x1005, []uint64{0x1012}},
			{0x1012, 0x1016, []uint64{0x1016}},
			{0x1016, 0x1018, []uint64{0x101a, 0x1018}},
			{0x1018, 0x101a, []uint64{0x101a}},
			{0x101a, 0x101b, nil},
		}},
	} {
		g, err := Build(img, 0x1000, 0x1000, 0x1005, Options{Procs: oracle{into: tc.into}, Dyninst: &Dyninst{}})
		if err != nil {
			t.Fatal(err)
		}
		if got := shape(g); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("JumpInto %v: blocks %+v\nwant %+v", tc.into != nil, got, tc.want)
		}
	}
}

// TestDyninstDecode: with Dyninst.Decode, the block ends before an
// instruction Dyninst 12.3 does not decode (vptestmb), which is in no
// block and counts as no undecodable bytes, and the code after it is
// parsed only where an edge leads; an entry it does not decode fails
// with ErrDyninstEntry.
func TestDyninstDecode(t *testing.T) {
	code := cat(
		[]byte{0x48, 0x89, 0xf8},                   // 1000: mov %rdi,%rax
		[]byte{0x62, 0xb2, 0x75, 0x20, 0x26, 0xd1}, // 1003: vptestmb %ymm17,%ymm17,%k2
		[]byte{0x74, 0x01},                         // 1009: je 100c
		[]byte{0x90},                               // 100b: nop
		[]byte{0xc3},                               // 100c: ret
	)
	img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}}, nil)
	for _, tc := range []struct {
		dyninst bool
		want    []blockShape
	}{
		{false, []blockShape{{0x1000, 0x100b, []uint64{0x100c, 0x100b}}, {0x100b, 0x100c, []uint64{0x100c}}, {0x100c, 0x100d, nil}}},
		{true, []blockShape{{0x1000, 0x1003, nil}}},
	} {
		g, err := Build(img, 0x1000, 0x1000, 0x100d, Options{Dyninst: decodeAs(tc.dyninst, elf.EM_X86_64)})
		if err != nil {
			t.Fatal(err)
		}
		if got := shape(g); !reflect.DeepEqual(got, tc.want) || g.Undecodable != 0 {
			t.Errorf("DyninstDecode %v: blocks %+v, %d undecodable bytes\nwant %+v", tc.dyninst, got, g.Undecodable, tc.want)
		}
	}
	if _, err := Build(img, 0x1003, 0x1003, 0x100d, Options{Dyninst: decodeAs(true, elf.EM_X86_64)}); !errors.Is(err, ErrDyninstEntry) {
		t.Errorf("entry vptestmb: %v, want ErrDyninstEntry", err)
	}
}

// TestJumpIntoTailCall: Dyninst's tail-call test still applies to a jump
// into another procedure's middle: after a pop of a register calls
// preserve, or alone in the entry block, it is a tail call, and the parse
// does not go on there.
func TestJumpIntoTailCall(t *testing.T) {
	into := func(t uint64) (uint64, uint64, bool) {
		if t > 0x1010 && t < 0x1014 {
			return 0x1010, 0x1014, true
		}
		return 0, 0, false
	}
	for _, tc := range []struct {
		name string
		code []byte
		want []blockShape
	}{
		{"after pop %rbx", cat([]byte{0x5b, 0xeb, 0x0f}, make90(13), []byte{0x90, 0x90, 0x90, 0xc3}),
			[]blockShape{{0x1000, 0x1003, nil}}},
		{"alone in the entry block", cat([]byte{0xeb, 0x10}, make90(14), []byte{0x90, 0x90, 0x90, 0xc3}),
			[]blockShape{{0x1000, 0x1002, nil}}},
		{"after mov", cat([]byte{0x89, 0xc3, 0xeb, 0x0e}, make90(12), []byte{0x90, 0x90, 0x90, 0xc3}),
			[]blockShape{{0x1000, 0x1004, []uint64{0x1012}}, {0x1012, 0x1014, nil}}},
	} {
		img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: tc.code}}, nil)
		g, err := Build(img, 0x1000, 0x1000, 0x1010, Options{Procs: oracle{into: into}, Dyninst: &Dyninst{Decode: isa.Dyninst12For(elf.EM_X86_64)}})
		if err != nil {
			t.Fatal(err)
		}
		if got := shape(g); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: blocks %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}
