package procs

import (
	"fmt"
	"reflect"
	"testing"

	"bloop/loader"
	"bloop/structure"
)

// code is a small stripped .text at 0x1000: a procedure with a frame that
// calls the next one, a leaf, one that ends with a call to the procedure
// placed right after it, and a leaf reached by nothing, with padding
// between them.
var code = []byte{
	0x55,             // 1000 push rbp
	0x48, 0x89, 0xe5, // 1001 mov rbp,rsp
	0xe8, 0x07, 0, 0, 0, // 1004 call 1010
	0x5d,                   // 1009 pop rbp
	0xc3,                   // 100a ret
	0x0f, 0x1f, 0x44, 0, 0, // 100b nopl
	0x31, 0xc0, // 1010 xor eax,eax
	0xc3,                                                                         // 1012 ret
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, // 1013 int3
	0x50,             // 1020 push rax
	0xe8, 0, 0, 0, 0, // 1021 call 1026 (which does not return)
	0x31, 0xc0, // 1026 xor eax,eax
	0xc3,                                     // 1028 ret
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, // 1029 int3
	0x31, 0xc0, // 1030 xor eax,eax
	0xc3, // 1032 ret
}

type want struct {
	lo, hi uint64
	src    Source
	name   string
}

func (w want) String() string { return fmt.Sprintf("[%#x,%#x) %v %s", w.lo, w.hi, w.src, w.name) }

func TestFind(t *testing.T) {
	sym := func(name string, lo, hi uint64, sized bool) *loader.Func {
		return &loader.Func{Name: name, Aliases: []string{name}, Addr: lo, End: hi, Sized: sized}
	}
	cases := []struct {
		name   string
		setup  func(img *loader.Image)
		opt    Options
		expect []want
	}{
		{"stripped", func(*loader.Image) {}, Options{}, []want{
			{0x1000, 0x1010, Gap, "targ1000"}, {0x1010, 0x1020, Call, "targ1010"},
			{0x1020, 0x1026, Gap, "targ1020"}, {0x1026, 0x1030, Call, "targ1026"}, {0x1030, 0x1033, Gap, "targ1030"}}},
		{"entry point", func(img *loader.Image) { img.Entry = 0x1000 }, Options{}, []want{
			{0x1000, 0x1010, Entry, "_start"}, {0x1010, 0x1020, Call, "targ1010"},
			{0x1020, 0x1026, Gap, "targ1020"}, {0x1026, 0x1030, Call, "targ1026"}, {0x1030, 0x1033, Gap, "targ1030"}}},
		{"FDEs bound their procedures", func(img *loader.Image) {
			img.Frames = []structure.Range{{Lo: 0x1000, Hi: 0x100b}, {Lo: 0x1020, Hi: 0x1026}}
		}, Options{}, []want{
			{0x1000, 0x100b, EHFrame, "targ1000"}, {0x1010, 0x1020, Call, "targ1010"},
			{0x1020, 0x1026, EHFrame, "targ1020"}, {0x1026, 0x1030, Call, "targ1026"}, {0x1030, 0x1033, Gap, "targ1030"}}},
		{"constructor", func(img *loader.Image) { img.InitFuncs = []uint64{0x1030, 0x5000} }, Options{}, []want{
			{0x1000, 0x1010, Gap, "targ1000"}, {0x1010, 0x1020, Call, "targ1010"},
			{0x1020, 0x1026, Gap, "targ1020"}, {0x1026, 0x1030, Call, "targ1026"}, {0x1030, 0x1033, InitArray, "targ1030"}}},
		// Code that symbols cover is not swept, for calls either.
		{"sized symbol", func(img *loader.Image) { img.Funcs = []*loader.Func{sym("f", 0x1000, 0x100b, true)} }, Options{}, []want{
			{0x1000, 0x100b, Symbol, "f"}, {0x1010, 0x1020, Gap, "targ1010"},
			{0x1020, 0x1026, Gap, "targ1020"}, {0x1026, 0x1030, Call, "targ1026"}, {0x1030, 0x1033, Gap, "targ1030"}}},
		{"unsized symbol kept whole", func(img *loader.Image) { img.Funcs = []*loader.Func{sym("f", 0x1000, 0x1033, false)} }, Options{}, []want{
			{0x1000, 0x1033, Symbol, "f"}}},
		{"unsized symbol split", func(img *loader.Image) { img.Funcs = []*loader.Func{sym("f", 0x1000, 0x1033, false)} }, Options{SplitUnsized: true}, []want{
			{0x1000, 0x1010, Symbol, "f"}, {0x1010, 0x1020, Call, "targ1010"},
			{0x1020, 0x1026, Gap, "targ1020"}, {0x1026, 0x1030, Call, "targ1026"}, {0x1030, 0x1033, Gap, "targ1030"}}},
		{"nothing inside a sized symbol", func(img *loader.Image) {
			img.Funcs = []*loader.Func{sym("f", 0x1000, 0x1033, true)}
			img.Entry, img.Frames, img.InitFuncs = 0x1010, []structure.Range{{Lo: 0x1020, Hi: 0x1026}}, []uint64{0x1030}
		}, Options{SplitUnsized: true}, []want{{0x1000, 0x1033, Symbol, "f"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: 0x1000, Data: code}}, nil)
			c.setup(img)
			var got []want
			for _, p := range Find(img, c.opt).Procs {
				got = append(got, want{p.Lo, p.Hi, p.Source, p.Name()})
			}
			if !reflect.DeepEqual(got, c.expect) {
				t.Errorf("got  %v\nwant %v", got, c.expect)
			}
		})
	}
}

func TestSubtract(t *testing.T) {
	r := func(lo, hi uint64) structure.Range { return structure.Range{Lo: lo, Hi: hi} }
	cases := []struct {
		rs, cut, want []structure.Range
	}{
		{[]structure.Range{r(0, 10)}, nil, []structure.Range{r(0, 10)}},
		{[]structure.Range{r(0, 10)}, []structure.Range{r(2, 4), r(6, 12)}, []structure.Range{r(0, 2), r(4, 6)}},
		{[]structure.Range{r(0, 10), r(20, 30)}, []structure.Range{r(5, 25)}, []structure.Range{r(0, 5), r(25, 30)}},
		{[]structure.Range{r(0, 10)}, []structure.Range{r(0, 10)}, nil},
	}
	for _, c := range cases {
		if got := subtract(c.rs, c.cut); !reflect.DeepEqual(got, c.want) {
			t.Errorf("subtract(%v, %v) = %v, want %v", c.rs, c.cut, got, c.want)
		}
	}
}
