package isa

import (
	"encoding/hex"
	"slices"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// vtText and vtData are the .text (at 0x10000) and .rodata (at 0x20000)
// of this source as GNU as and ld 2.40 built it (as --64 vt.s;
// ld -Ttext=0x10000 --section-start=.rodata=0x20000): the jump-table
// shapes only the value analysis (valueTable) resolves.
//
//	a0:   and $0xf,%ecx; and $0xf,%eax       // A: glibc's str(n)(case)cmp_sse2/sse42
//	      cmp %eax,%ecx; je a_eq; ja a_ld     //    index 15 + eax - ecx, ecx > eax
//	      xchg %eax,%ecx
//	a_ld: lea 0xf(%rax),%r9; sub %rcx,%r9
//	      lea tbla(%rip),%r10; movslq (%r10,%r9,4),%r9
//	      lea (%r10,%r9,1),%r10; jmp *%r10
//	a_eq: ret
//	a_t:  nop x15; ret
//	b0:   movzbl 1(%r13),%r9d                 // B: glibc's printf: a character
//	      lea -0x20(%r9),%eax; cmp $0x5,%al   //    bounded by an 8-bit compare
//	      jbe b_ld; ret                       //    indexes a byte table, whose
//	b_ld: movzbl %r9b,%eax                    //    values index offsets from a
//	      lea tblb(%rip),%rcx; lea tblb2(%rip),%rsi  //  code label
//	      sub $0x20,%eax; cltq; movzbl (%rcx,%rax,1),%eax
//	      lea b_lab(%rip),%rcx; movslq (%rsi,%rax,4),%rax
//	      add %rcx,%rax; jmp *%rax
//	b_lab: nop x3; ret
//	c0:   movzbl 1(%r13),%r9d                 // C: B with the second table's
//	      lea -0x20(%r9),%eax; cmp $0x5,%al   //    base in a register the
//	      ja c_out                            //    first load's address used
//	      movzbl %r9b,%eax; lea tblb(%rip),%rdi; lea b_lab(%rip),%rcx
//	      sub $0x20,%eax; cltq; movzbl (%rdi,%rax,1),%edx
//	      lea tblb2(%rip),%rax; movslq (%rax,%rdx,4),%rax
//	      add %rcx,%rax; jmp *%rax
//	c_out: ret
//	d0:   movslq 0x18(%rdi),%rax              // D: glibc's _authenticate:
//	      cmp $0x3,%eax; jbe d_ld; ret        //    absolute entries, other
//	d_ld: lea tbld(%rip),%rdx                 //    procedures' entries
//	      jmp *(%rdx,%rax,8)
//	e0:   and $0x3,%esi; movzbl %sil,%eax     // E: python's ceval: absolute
//	      mov tble(,%rax,8),%rax; jmp *%rax   //    entries loaded first
//	f0:   lea b_lab(%rip),%rax                // F: a code label
//	      cmp $0x5a,%dl; ja f_j; ret
//	f_j:  jmp *%rax
//	g0:   and $0x7,%edi; lea tblg(%rip),%rdx  // G: a mask bounds the index
//	      movslq (%rdx,%rdi,4),%rax           //    loosely: entry 3 points
//	      add %rdx,%rax; jmp *%rax            //    into an instruction
//	g_t:  nop; nop; movabs $0x1122334455667788,%rax; ret
//	h0:   lea tbla(%rip),%r10                 // H: no bound
//	      movslq (%r10,%rdi,4),%r9; lea (%r10,%r9,1),%r10; jmp *%r10
//	i0:   mov 8(%rdi),%rax; jmp *%rax         // I: a pointer from memory
//	other: ret x4                             // another procedure
//	      .section .rodata
//	tbla: .long a_t-tbla, ..., a_t+14-tbla    // 15 entries, then 16 more
//	      .long a_eq-tbla; .long other-tbla x15
//	tblb: .byte 0, 2, 1, 2, 0, 3, 7, 7
//	tblb2: .long 0, 1, 2, 3; .long 0x7fffffff x4
//	tbld: .quad other, other+1, other+2, other+3
//	tble: .quad a_t, a_t+1, a_t+2, a_t+3
//	tblg: .long g_t-tblg, ..., g_t+7-tblg
const (
	vtText = "83e10f83e00f39c1741c7701914c8d480f4929c94c8d15e5ff00004f630c8a4f8d140a41ffe2c3909090909090909090" +
		"909090909090c3450fb64d01418d41e03c057601c3410fb6c1488d0d2c000100488d352d00010083e82048980fb60401" +
		"488d0d09000000486304864801c8ffe0909090c3450fb64d01418d41e03c05772b410fb6c1488d3df0ff0000488d0ddd" +
		"ffffff83e82048980fb61407488d05e1ff0000486304904801c8ffe0c34863471883f8037601c3488d15eaff0000ff24" +
		"c283e603400fb6c6488b04c5c8000200ffe0488d0597ffffff80fa5a7701c3ffe083e707488d15fdff0000486304ba48" +
		"01d0ffe0909048b88877665544332211c34c8d15f8fe00004d630cba4f8d140a41ffe2488b4708ffe0c3c3c3c3"
	vtData = "2700ffff2800ffff2900ffff2a00ffff2b00ffff2c00ffff2d00ffff2e00ffff2f00ffff3000ffff3100ffff3200ffff" +
		"3300ffff3400ffff3500ffff2600ffff1901ffff1901ffff1901ffff1901ffff1901ffff1901ffff1901ffff1901ffff" +
		"1901ffff1901ffff1901ffff1901ffff1901ffff1901ffff1901ffff0002010200030707000000000100000002000000" +
		"03000000ffffff7fffffff7fffffff7fffffff7f0000000019010100000000001a010100000000001b01010000000000" +
		"1c010100000000002700010000000000280001000000000029000100000000002a000100000000000c00ffff0d00ffff" +
		"0e00ffff0f00ffff1000ffff1100ffff1200ffff1300ffff"
	vtOther = 0x10119 // the other procedure; the test's code lies before it
)

// seqFrom is n consecutive addresses from a.
func seqFrom(a uint64, n int) []uint64 {
	var out []uint64
	for k := 0; k < n; k++ {
		out = append(out, a+uint64(k))
	}
	return out
}

// TestValueTables resolves the shapes of vtText, in bloop's view (entries
// the procedure may jump to at instruction starts, up to the first inside
// it that starts none) and in Dyninst's (every entry in code, other
// procedures' too; no table where Dyninst 12.3 finds none).
func TestValueTables(t *testing.T) {
	code, err1 := hex.DecodeString(vtText)
	data, err2 := hex.DecodeString(vtData)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	mem := &memImage{code: code, data: data, codeAddr: 0x10000, dataAddr: 0x20000}
	starts := map[uint64]bool{}
	for a := uint64(0x10000); a < 0x10000+uint64(len(code)); {
		starts[a] = true
		in := amd64{}.Decode(mem.Bytes(a, a+15), a)
		a = in.End()
	}
	to := Targets{
		Valid: func(a uint64) bool { return a >= 0x10000 && a < vtOther },
		Start: func(a uint64) bool { return starts[a] },
	}
	dy := to
	dy.Dyninst = true
	dy.Code = func(a uint64) bool { return a >= vtOther && a < vtOther+4 }
	const aT, bLab, gT = 0x10027, 0x10070, 0x100f4
	aDyninst := append(seqFrom(aT, 15), 0x10026)
	for k := 0; k < 15; k++ {
		aDyninst = append(aDyninst, vtOther)
	}
	for _, tc := range []struct {
		name        string
		start       uint64
		taken       []uint64
		want, wantD []uint64
	}{
		// Dyninst bounds 15 + eax - ecx by the masks alone, [0,30], and
		// reads on into the entries after the table.
		{"A masked difference, ja taken", 0x10000, []uint64{0x1000a}, seqFrom(aT, 15), aDyninst},
		{"A masked difference, swapped", 0x10000, nil, seqFrom(aT, 15), aDyninst},
		{"B byte table, offsets from a label", 0x10037, []uint64{0x10042}, seqFrom(bLab, 4), seqFrom(bLab, 4)},
		{"C byte table, base register reused", 0x10074, nil, seqFrom(bLab, 4), nil},
		{"D other procedures' entries", 0x100ad, []uint64{0x100b4}, nil, seqFrom(vtOther, 4)},
		{"E absolute entries in a register", 0x100c1, nil, seqFrom(aT, 4), seqFrom(aT, 4)},
		{"F code label", 0x100d2, []uint64{0x100dc}, []uint64{bLab}, []uint64{bLab}},
		// The PIC idiom: JumpTable's idiom reader reads entries while they
		// start instructions; the mask bounds the value analysis's.
		{"G loose mask", 0x100e1, nil, seqFrom(gT, 3), seqFrom(gT, 8)},
		{"H no bound", 0x10101, nil, nil, nil},
		{"I pointer from memory", 0x10113, nil, nil, nil},
	} {
		path := pathTo(t, amd64{}, mem, tc.start, tc.taken...)
		jmp := path[len(path)-1]
		if got := (amd64{}).JumpTable(mem, path, jmp, to); !slices.Equal(got, tc.want) {
			t.Errorf("%s: targets %x, want %x", tc.name, got, tc.want)
		}
		if got := valueTable(mem, path, jmp, dy); !slices.Equal(got, tc.wantD) {
			t.Errorf("%s, as Dyninst: targets %x, want %x", tc.name, got, tc.wantD)
		}
		// The path without the jump, as the fuzz target passes it.
		if got := valueTable(mem, path[:len(path)-1], jmp, to); !slices.Equal(got, tc.want) {
			t.Errorf("%s without the jump on the path: targets %x, want %x", tc.name, got, tc.want)
		}
	}
}

// TestValueRanges: what the value analysis knows of a register after a
// sequence of instructions (laid out from 0x100; the branch at index taken
// is taken, -1: none). Bytes assembled by GNU as from the text beside them.
func TestValueRanges(t *testing.T) {
	const u32 = 1<<32 - 1
	tests := []struct {
		asm, hex string
		taken    int
		reg      x86asm.Reg // read at its width, as a signed number if signed
		signed   bool
		want     ival
	}{
		{"movzbl (%rdi),%eax; lea -0x30(%rax),%edx; cmp $9,%edx; ja; nop",
			"0fb6078d50d083fa090f87fa00000090", -1, x86asm.RDX, false, ival{0, 9}},
		// The compare reads the low byte of r9 - 0x20; the index is the
		// low byte of r9, less 0x20, sign-extended.
		{"lea -0x20(%r9),%eax; cmp $0x5a,%al; jbe (taken); movzbl %r9b,%eax; sub $0x20,%eax; cltq",
			"418d41e03c5a0f86fa000000410fb6c183e8204898", 2, x86asm.RAX, false, ival{0, 90}},
		{"and $0xf,%ecx; and $0xf,%eax; cmp %eax,%ecx; jb (taken); mov %eax,%edx; sub %ecx,%edx",
			"83e10f83e00f39c10f82fa00000089c229ca", 3, x86asm.RDX, false, ival{1, 15}},
		{"movslq 0x18(%rdi),%rax; cmp $3,%eax; jbe (taken)",
			"4863471883f8030f86fa000000", 2, x86asm.RAX, false, ival{0, 3}},
		{"and $7,%eax; shl $3,%eax", "83e007c1e003", -1, x86asm.RAX, false, ival{0, 56}},
		{"and $0x1f,%eax; shr $2,%eax", "83e01fc1e802", -1, x86asm.RAX, false, ival{0, 7}},
		{"and $7,%ecx; call", "83e107e8fb000000", -1, x86asm.RCX, false, full},
		{"movsbl (%rdi),%eax; cmp $-5,%eax; jl; cmp $10,%eax; jg",
			"0fbe0783f8fb0f8cfa00000083f80a0f8ffa000000", -1, x86asm.EAX, true, ival{-5, 10}},
		{"movzwl (%rdi),%eax; test %eax,%eax; je; cmp $4,%eax; ja",
			"0fb70785c00f84fa00000083f8040f87fa000000", -1, x86asm.RAX, false, ival{1, 4}},
		{"movzbl (%rdi),%eax; and $0xff,%eax; xchg %ax,%ax", "0fb60725ff0000006690", -1, x86asm.RAX, false, ival{0, 255}},
		{"cmpl $5,0x78(%rbx); ja; mov 0x78(%rbx),%eax", "837b78050f87fa0000008b4378", -1, x86asm.RAX, false, ival{0, 5}},
		// A store between the two loads.
		{"cmpl $5,0x78(%rbx); ja; movl $9,0x78(%rbx); mov 0x78(%rbx),%eax",
			"837b78050f87fa000000c74378090000008b4378", -1, x86asm.RAX, false, ival{0, u32}},
		// The compare bounds eax, not the upper half of rax.
		{"mov $8,%edx; cmp %edx,%eax; jae", "ba0800000039d00f83fa000000", -1, x86asm.EAX, false, ival{0, 7}},
		{"mov $8,%edx; cmp %edx,%eax; jae", "ba0800000039d00f83fa000000", -1, x86asm.RAX, false, full},
	}
	for _, tc := range tests {
		code, err := hex.DecodeString(tc.hex)
		if err != nil {
			t.Fatal(err)
		}
		xs, path := decodeAll(t, code, tc.taken)
		end := path[len(path)-1].End()
		if tc.taken == len(path)-1 {
			end = 0x800
		}
		s := newValues(&memImage{})
		s.walk(path, xs, end)
		v := s.read(tc.reg)
		var got ival
		if tc.signed {
			got = s.rng(s.sext(v))
		} else {
			got = s.rng(s.zext(v))
		}
		if got != tc.want {
			t.Errorf("%s: %v in [%d, %d], want [%d, %d]", tc.asm, tc.reg, got.lo, got.hi, tc.want.lo, tc.want.hi)
		}
	}
}

// TestDyninstJunk: Dyninst 12.3 stops reading a table at the first entry
// whose code, decoded up to its first control transfer, holds an
// instruction that does not decode or 00 00; in vtText's table A, with
// the other procedure's code made junk, after the 16 entries before it.
func TestDyninstJunk(t *testing.T) {
	for _, tc := range []struct {
		asm, hex string
		junk     bool
	}{
		{"add $0x20,%rdi; mov %dh,(%rdi); ret", "4883c7208837c3", false},
		{"jmp *%rcx", "ffe1", false},
		{"and %cl,-0x7d(%rax); c7 20 (glibc's 0xa7830)", "204883c720", true},
		{"pop %rax; 0e (push %cs, none in 64-bit mode)", "580e004b63", true},
		{"mov %cs,(%rbx); add %al,(%rax)", "8c0b0000", true},
		{"vptestmb %ymm17,%ymm16,%k1 (Dyninst 12.3 does not decode it); ret", "62b27d2026c9c3", true},
		{"nothing", "", true},
	} {
		code, err := hex.DecodeString(tc.hex)
		if err != nil {
			t.Fatal(err)
		}
		mem := &memImage{code: code, codeAddr: 0x1000}
		if got := dyninstJunk(mem, 0x1000); got != tc.junk {
			t.Errorf("%s: junk %v, want %v", tc.asm, got, tc.junk)
		}
	}
	code, _ := hex.DecodeString(vtText)
	data, _ := hex.DecodeString(vtData)
	code[vtOther-0x10000] = 0x0e
	mem := &memImage{code: code, data: data, codeAddr: 0x10000, dataAddr: 0x20000}
	dy := Targets{
		Valid:   func(a uint64) bool { return a >= 0x10000 && a < vtOther },
		Start:   func(uint64) bool { return true },
		Dyninst: true,
		Code:    func(a uint64) bool { return a >= vtOther && a < vtOther+4 },
	}
	path := pathTo(t, amd64{}, mem, 0x10000, 0x1000a)
	want := append(seqFrom(0x10027, 15), 0x10026)
	if got := valueTable(mem, path, path[len(path)-1], dy); !slices.Equal(got, want) {
		t.Errorf("table A before junk: targets %x, want %x", got, want)
	}
}
