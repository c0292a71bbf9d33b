package isa

import (
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"golang.org/x/arch/arm64/arm64asm"
)

// jtText and jtData are the .text (at 0x10000) and .rodata (at 0x20000) of
// this source as GNU as and ld 2.40 built it (aarch64-linux-gnu-as jt.s;
// ld -Ttext=0x10000 --section-start=.rodata=0x20000): gcc's three
// dispatch shapes, clang's two, and absolute entries.
//
//	a0:   cmp w0, #7; b.hi a_def                  // A: gcc, byte entries
//	      adrp x1, tbla; add x1, x1, :lo12:tbla
//	      ldrb w3, [x1, w0, uxtw]
//	      adr x1, a_rtx; add x3, x1, w3, sxtb #2; br x3
//	a_rtx: nop x8
//	a_def: ret
//	b0:   cmp w0, #4; b.hi b_def                  // B: gcc, halfwords
//	      adrp x1, tblb; add x1, x1, :lo12:tblb
//	      ldrh w3, [x1, w0, uxtw #1]
//	      adr x1, b_rtx; add x3, x1, w3, sxth #2; br x3
//	b_rtx: nop x5
//	b_def: ret
//	c0:   cmp w0, #3; b.ls c_in; ret              // C: gcc, words, b.ls taken
//	c_in: adrp x1, tblc; add x1, x1, :lo12:tblc
//	      ldr w3, [x1, w0, uxtw #2]
//	      adr x1, c_rtx; add x3, x1, w3, sxtw #2; br x3
//	c_rtx: nop x4
//	d0:   adrp x13, tbld; add x13, x13, :lo12:tbld  // D: clang 14 (ctrl main)
//	      and w14, w8, #0xffff; and w15, w14, #0xffff
//	      cmp w15, #0x7; b.hi d_def
//	      and x14, x14, #0xffff; adr x15, d_rtx
//	      ldrb w16, [x13, x14]; add x15, x15, x16, lsl #2; br x15
//	d_rtx: nop x8
//	d_def: ret
//	e0:   cmp w0, #2; b.hi e_def                  // E: clang, offsets from the table
//	      adrp x8, tble; add x8, x8, :lo12:tble
//	      ldrsw x9, [x8, x0, lsl #2]; add x9, x8, x9; br x9
//	e_def: ret
//	f0:   cmp x0, #3; b.hs f_def                  // F: absolute entries
//	      adrp x1, tblf; add x1, x1, :lo12:tblf
//	      ldr x0, [x1, x0, lsl #3]; br x0
//	f_def: ret
//	      .section .rodata
//	tbla: .byte 0, 1, 2, 3, 4, 5, 6, -2
//	tblb: .hword 0, 1, 2, 3, 4
//	tblc: .word 0, 1, 2, 3
//	tbld: .byte 0, 1, 2, 3, 4, 5, 6, 7
//	tble: .word e_def-tble, c_rtx-tble, a_rtx-tble
//	tblf: .quad a_rtx, b_rtx, c_rtx
const (
	jtText = "1f1c0071e8010054810000902100009123486038610000102388238b60001fd61f2003d51f2003d51f2003d51f2003d5" +
		"1f2003d51f2003d51f2003d51f2003d5c0035fd61f100071880100548100009021200091235860786100001023a8238b" +
		"60001fd61f2003d51f2003d51f2003d51f2003d51f2003d5c0035fd61f0c007149000054c0035fd68100009021500091" +
		"235860b86100001023c8238b60001fd61f2003d51f2003d51f2003d51f2003d58d000090ad9100910e3d0012cf3d0012" +
		"ff1d0071c8010054ce3d40928f000010b0696e38ef09108be0011fd61f2003d51f2003d51f2003d51f2003d51f2003d5" +
		"1f2003d51f2003d51f2003d5c0035fd61f080071c80000548800009008b100910979a0b80901098b20011fd6c0035fd6" +
		"1f0c00f1a20000548100009021e00091207860f800001fd6c0035fd6"
	jtData = "00010203040506fe000001000200030004000000000000000100000002000000030000000001020304050607f000ffff" +
		"7400fffff4fffeff20000100000000006400010000000000a000010000000000"
	jtTextAddr = 0x10000
	jtDataAddr = 0x20000
)

// memImage is a Memory of one code and one data range.
type memImage struct {
	code, data         []byte
	codeAddr, dataAddr uint64
}

func (m *memImage) Bytes(lo, hi uint64) []byte {
	end := m.codeAddr + uint64(len(m.code))
	if lo < m.codeAddr || lo >= end {
		return nil
	}
	if hi > end || hi < lo { // hi < lo: lo+n wrapped around, as Image.Bytes
		hi = end
	}
	return m.code[lo-m.codeAddr : hi-m.codeAddr]
}

func (m *memImage) ReadData(addr uint64, n int) []byte {
	for _, r := range []struct {
		b  []byte
		at uint64
	}{{m.code, m.codeAddr}, {m.data, m.dataAddr}} {
		// As Image.ReadData: n against what is left, since addr+n can wrap.
		if addr >= r.at && addr-r.at <= uint64(len(r.b)) && uint64(n) <= uint64(len(r.b))-(addr-r.at) {
			return r.b[addr-r.at : addr-r.at+uint64(n)]
		}
	}
	return nil
}

func jtMemory(t *testing.T) *memImage {
	code, err1 := hex.DecodeString(jtText)
	data, err2 := hex.DecodeString(jtData)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return &memImage{code: code, data: data, codeAddr: jtTextAddr, dataAddr: jtDataAddr}
}

// pathTo decodes with ar the straight-line path from start to the first
// indirect jump, taking the branches at the addresses in taken.
func pathTo(t *testing.T, ar Arch, mem Memory, start uint64, taken ...uint64) []Inst {
	var path []Inst
	for a := start; len(path) < 64; {
		in := ar.Decode(mem.Bytes(a, a+uint64(ar.MaxLen())), a)
		path = append(path, in)
		switch {
		case in.Kind == IndirectJump:
			return path
		case slices.Contains(taken, a):
			a = in.Target
		default:
			a = in.End()
		}
	}
	t.Fatalf("no indirect jump after %#x", start)
	return nil
}

// TestJumpTableARM64 resolves gcc's and clang's dispatch sequences, in
// bloop's view and in Dyninst's (which bounds an index only by a compare
// of that register at the width the load reads it).
func TestJumpTableARM64(t *testing.T) {
	mem := jtMemory(t)
	to := Targets{
		Valid: func(a uint64) bool { return a >= jtTextAddr && a < jtTextAddr+uint64(len(mem.code)) },
		Start: func(a uint64) bool { return a%4 == 0 },
	}
	seq := func(from uint64, n int) []uint64 {
		var out []uint64
		for k := 0; k < n; k++ {
			out = append(out, from+uint64(4*k))
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		start   uint64
		taken   []uint64
		want    []uint64
		dyninst bool // Dyninst resolves it too
	}{
		{"A gcc ldrb sxtb", 0x10000, nil, append(seq(0x10020, 7), 0x10018), true},
		{"B gcc ldrh sxth", 0x10044, nil, seq(0x10064, 5), true},
		{"C gcc ldr sxtw, b.ls taken", 0x1007c, []uint64{0x10080}, seq(0x100a0, 4), true},
		{"D clang ldrb lsl, compared twin", 0x100b0, nil, seq(0x100dc, 8), false},
		// cmp w0 bounds the 32-bit index, the load indexes with x0
		{"E clang ldrsw from the table", 0x10100, nil, []uint64{0x1011c, 0x100a0, 0x10020}, false},
		{"F absolute", 0x10120, nil, []uint64{0x10020, 0x10064, 0x100a0}, true},
	} {
		path := pathTo(t, arm64{}, mem, tc.start, tc.taken...)
		jmp := path[len(path)-1]
		got := arm64{}.JumpTable(mem, path, jmp, to)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: targets %x, want %x", tc.name, got, tc.want)
		}
		dy := to
		dy.Dyninst = true
		got = arm64{}.JumpTable(mem, path, jmp, dy)
		if want := tc.want; !tc.dyninst && got != nil || tc.dyninst && !slices.Equal(got, want) {
			t.Errorf("%s, as Dyninst: targets %x, want %x (resolved: %v)", tc.name, got, want, tc.dyninst)
		}
	}
}

// TestBoundARM64 covers the compare-and-branch idioms that bound a table's
// index. Words as GNU as 2.40 assembled the text; the load is last, and
// the path takes the branch at index taken (-1: none).
func TestBoundARM64(t *testing.T) {
	const (
		cmp7    = "71001c1f" // cmp w0, #7
		cmp8    = "7100201f" // cmp w0, #8
		bhi     = "54000048" // b.hi
		bls     = "54000049" // b.ls
		bhs     = "54000042" // b.hs
		blo     = "54000043" // b.lo
		bgt     = "5400004c" // b.gt
		ldrbW0  = "38604823" // ldrb w3, [x1, w0, uxtw]
		ldrhW0  = "78605823" // ldrh w3, [x1, w0, uxtw #1]
		movW0W5 = "2a0503e0" // mov w0, w5
		bl      = "94000002" // bl
		cmp19   = "71001e7f" // cmp w19, #7
		ldrbW19 = "38734823" // ldrb w3, [x1, w19, uxtw]
		movW2W0 = "2a0003e2" // mov w2, w0
		ldrbW2  = "38624823" // ldrb w3, [x1, w2, uxtw]
		cmp31   = "71007c1f" // cmp w0, #31
		lsrW2   = "53027c02" // lsr w2, w0, #2
		ubfxW2  = "53010c02" // ubfx w2, w0, #1, #3
		addW4   = "11000484" // add w4, w4, #1
		addsW4  = "31000484" // adds w4, w4, #1
		addW0   = "11000400" // add w0, w0, #1
		andW15  = "12003dcf" // and w15, w14, #0xffff
		cmp15   = "71001dff" // cmp w15, #7
		andX14  = "92403dce" // and x14, x14, #0xffff
		ldrbX14 = "386e69b0" // ldrb w16, [x13, x14]
	)
	for _, tc := range []struct {
		name   string
		words  []string
		taken  int
		want   int
		direct bool
	}{
		{"cmp #7; b.hi", []string{cmp7, bhi, ldrbW0}, -1, 8, true},
		{"cmp #7; b.ls taken", []string{cmp7, bls, ldrbW0}, 1, 8, true},
		{"cmp #8; b.hs", []string{cmp8, bhs, ldrhW0}, -1, 8, true},
		{"cmp #8; b.lo taken", []string{cmp8, blo, ldrbW0}, 1, 8, true},
		{"b.hi taken leaves the range", []string{cmp7, bhi, ldrbW0}, 1, 0, false},
		{"b.ls falling through bounds nothing", []string{cmp7, bls, ldrbW0}, -1, 0, false},
		{"another branch between", []string{cmp7, bgt, bhi, ldrbW0}, -1, 8, true},
		{"a flag-neutral add between", []string{cmp7, addW4, bhi, ldrbW0}, -1, 8, true},
		{"adds sets the flags the branch reads", []string{cmp7, addsW4, bhi, ldrbW0}, -1, 0, false},
		{"index replaced after the compare", []string{cmp7, bhi, movW0W5, ldrbW0}, -1, 0, false},
		{"index changed after the compare", []string{cmp7, bhi, addW0, ldrbW0}, -1, 0, false},
		{"a call may change w0", []string{cmp7, bhi, bl, ldrbW0}, -1, 0, false},
		{"w19 survives a call", []string{cmp19, bhi, bl, ldrbW19}, -1, 8, true},
		{"index copied before the compare", []string{movW2W0, cmp7, bhi, ldrbW2}, -1, 8, true},
		{"index shifted: w0>>2 <= 7", []string{cmp31, bhi, lsrW2, ldrbW2}, -1, 8, false},
		{"index extracted: (w0>>1)&7", []string{cmp31, bhi, ubfxW2, ldrbW2}, -1, 8, false},
		{"a mask alone bounds: (w0>>1)&7", []string{ubfxW2, ldrbW2}, -1, 8, false},
		{"clang: the compare reads a twin", []string{andW15, cmp15, bhi, andX14, ldrbX14}, -1, 8, false},
	} {
		var xs []a64
		addr := uint64(0x1000)
		for i, w := range tc.words {
			b, _ := hex.DecodeString(w)
			word := binary.BigEndian.Uint32(b)
			x, err := arm64asm.Decode(binary.LittleEndian.AppendUint32(nil, word))
			if err != nil {
				t.Fatalf("%s: %s: %v", tc.name, w, err)
			}
			xs = append(xs, a64{x, addr})
			addr += 4
			if i == tc.taken {
				addr = 0x2000
			}
		}
		m := xs[len(xs)-1].Args[1].(arm64asm.MemExtend)
		got, direct := arm64Bound(xs, len(xs)-1, regNum(m.Index), isX(m.Index), false)
		if got != tc.want || direct != tc.direct {
			t.Errorf("%s: bound %d direct %v, want %d %v", tc.name, got, direct, tc.want, tc.direct)
		}
	}
}

// TestDyninstBoundARM64: what Dyninst bounds, from clang 14's switch
// dispatches (switch.c's interpret): at -O0 the value is compared with
// subs and reloaded from its stack slot, both of 64 bits, and hpcstruct
// puts the cases in the loop; at -O2 the compare reads w15 and the load
// indexes with x15, and hpcstruct leaves the cases out. Without dyninst
// the bound is bloop's own (-O0's table is then read while its entries
// point into the procedure).
func TestDyninstBoundARM64(t *testing.T) {
	o0 := []string{
		"38696908", // ldrb w8, [x8, x9]
		"71000108", // subs w8, w8, #0x0
		"f90003e8", // str x8, [sp]
		"f1002508", // subs x8, x8, #0x9
		"540008a8", // b.hi
		"f94003eb", // ldr x11, [sp]
		"9000000a", // adrp x10, ...
		"9130714a", // add x10, x10, #0xc1c
		"10000008", // adr x8, ...
		"b8ab7949", // ldrsw x9, [x10, x11, lsl #2]
	}
	withCall := append(append(slices.Clone(o0[:5]), "94000002"), o0[5:]...)   // bl before the reload
	otherStore := append(append(slices.Clone(o0[:5]), "f90003e9"), o0[5:]...) // str x9, [sp]
	o2 := []string{
		"3869680f", // ldrb w15, [x0, x9]
		"710025ff", // cmp w15, #0x9
		"54ffff48", // b.hi
		"10000090", // adr x16, ...
		"386f69d1", // ldrb w17, [x14, x15]
	}
	for _, tc := range []struct {
		name    string
		words   []string
		dyninst bool
		want    int
		direct  bool
	}{
		{"-O0, as Dyninst", o0, true, 10, true},
		{"-O0, bloop's own", o0, false, 0, false},
		{"-O0, a call before the reload", withCall, true, 0, false},
		{"-O0, the slot written again", otherStore, true, 0, false},
		{"-O2, as Dyninst", o2, true, 10, false},
		{"-O2, bloop's own", o2, false, 10, false},
	} {
		var xs []a64
		for i, w := range tc.words {
			b, _ := hex.DecodeString(w)
			x, err := arm64asm.Decode(binary.LittleEndian.AppendUint32(nil, binary.BigEndian.Uint32(b)))
			if err != nil {
				t.Fatalf("%s: %s: %v", tc.name, w, err)
			}
			xs = append(xs, a64{x, 0x1000 + 4*uint64(i)})
		}
		m := xs[len(xs)-1].Args[1].(arm64asm.MemExtend)
		got, direct := arm64Bound(xs, len(xs)-1, regNum(m.Index), isX(m.Index), tc.dyninst)
		if got != tc.want || direct != tc.direct {
			t.Errorf("%s: bound %d direct %v, want %d %v", tc.name, got, direct, tc.want, tc.direct)
		}
	}
}

// TestJumpTableARM64NotTables: indirect jumps that are no table resolve
// to nothing (a tail call through a loaded pointer, PLT0's br x17).
func TestJumpTableARM64NotTables(t *testing.T) {
	to := Targets{Valid: func(uint64) bool { return true }, Start: func(uint64) bool { return true }}
	for _, tc := range []struct{ name, code string }{
		// adrp x1, ...; ldr x1, [x1, #4024]; cbz x1; mov x16, x1; br x16 (deregister_tm_clones)
		{"tail call through the GOT", strings.Join([]string{"f00000e1", "f947dc21", "b4000061", "aa0103f0", "d61f0200"}, "")},
		// stp x16, x30, [sp, #-16]!; adrp x16; ldr x17, [x16, #4088]; add x16, x16, #0xff8; br x17
		{"PLT0", strings.Join([]string{"a9bf7bf0", "f00000f0", "f947fe11", "913fe210", "d61f0220"}, "")},
	} {
		be, _ := hex.DecodeString(tc.code)
		code := make([]byte, len(be))
		for i := 0; i+4 <= len(be); i += 4 {
			binary.LittleEndian.PutUint32(code[i:], binary.BigEndian.Uint32(be[i:]))
		}
		mem := &memImage{code: code, codeAddr: 0x1000}
		path := pathTo(t, arm64{}, mem, 0x1000)
		if got := (arm64{}).JumpTable(mem, path, path[len(path)-1], to); got != nil {
			t.Errorf("%s: targets %x, want none", tc.name, got)
		}
	}
}
