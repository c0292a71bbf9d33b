package isa

import (
	"iter"
	"strconv"
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// Dyninst 12.3's x86 decoder (hpcstruct 2023.08's) is table driven: a VEX
// or EVEX instruction is looked up by its opcode map (0F, 0F38, 0F3A), the
// row of its opcode in that map's SSE table, the column of its implied
// prefix (VEX.pp, EVEX.pp), and, where the row multiplexes the encodings,
// the column of its encoding (VEX2, VEX3, EVEX; then W). Where the path
// ends in an illegal entry the instruction does not decode, and Dyninst's
// parser ends the block before it. In glibc's string functions: the
// vptestmb of __strncasecmp_evex and its siblings (row 0F38 26 has an F3
// column, vptestnmb, but no 66 one), the vpbroadcastb from a general
// register that starts __memset_evex_unaligned_erms (0F38 has no row 7A),
// the vmovdqu8 loads and stores of __strstr_avx512 and memset's tails (no
// F2 column in rows 0F 6F and 0F 7F) and the kmovq from a general register
// before them (no F2 column in row 0F 92, a VEX instruction).
//
// dyninst12Holes lists, per opcode map and implied prefix (0 none, 1 66,
// 2 F3, 3 F2), the opcodes without a row or without a column for the
// prefix: no EVEX form of them decodes, nor a VEX one in map 0F (VEX
// instructions of 0F38 and 0F3A have other routes, such as AMD's FMA4
// table for 0F3A 6A, 6B, 6D, 6F, 79 and 7B, which libm's _fma4 functions
// use). dyninst12EVEXHoles lists the rows whose EVEX column is illegal.
// Opcodes reached through other tables (the groups of 0F 71-73) and the
// map and prefix pairs not listed are taken to decode.
var dyninst12Holes = map[[2]byte]string{
	{1, 1}: "92",
	{1, 3}: "6f 7f 92",
	{2, 1}: "1b 26 48-4b 50-57 5b-64 67-74 7a 7b 80-82 84-87 8a 8f 94 95 a4 a5 b0-b3 c0-c3 c5 c9 ce-da e0-f6 f8-ff",
	{2, 2}: "00-0f 16-1f 2b-2f 36 37 3a-f4 f8-ff",
	{2, 3}: "00-ef f2-f4 f8-ff",
	{3, 1}: "07 10-13 15 1c 24 28-2f 34-37 3c 3d 40 43 45 47-49 4d-4f 52 53 58-60 64 65 68 6a-de e0-ff",
}

var dyninst12EVEXHoles = map[[2]byte]string{
	// vmovhlps, vmovlps; vmovlpd, vpinsrw, vpextrw, vpsubq; vmovq.
	{1, 0}: "12 13",
	{1, 1}: "13 c4 c5 fb",
	{1, 2}: "7e",
	// vphadd*, vphsub*, vpmaskmov*; andn, bextr, shlx and the other
	// BMI instructions of 0F38 F2-F7.
	{2, 0}: "f2 f5 f7",
	{2, 1}: "01-03 05-07 8c 8e f7",
	{2, 2}: "f5-f7",
	{2, 3}: "f5-f7",
	// vpextrb, vpextrd/q, vextractps, vpinsrb, vinsertps, vpinsrd/q,
	// kshift*, vpclmulqdq, vblendv*, vpblendvb, vfmaddps, vaeskeygenassist.
	{3, 1}: "14 16 17 20-22 30-33 44 4a-4c 69 df",
}

// holeSets turns a table of opcode ranges into bit sets.
func holeSets(table map[[2]byte]string) map[[2]byte]*opSet {
	out := map[[2]byte]*opSet{}
	for k, spec := range table {
		set := new(opSet)
		for _, f := range strings.Fields(spec) {
			lo, hi, _ := strings.Cut(f, "-")
			if hi == "" {
				hi = lo
			}
			a, err1 := strconv.ParseUint(lo, 16, 8)
			b, err2 := strconv.ParseUint(hi, 16, 8)
			if err1 != nil || err2 != nil || a > b {
				panic("isa: bad opcode range " + f)
			}
			for op := a; op <= b; op++ {
				set[op/64] |= 1 << (op % 64)
			}
		}
		out[k] = set
	}
	return out
}

var dyninstHoles, dyninstEVEXHoles = holeSets(dyninst12Holes), holeSets(dyninst12EVEXHoles)

// opSet is a set of opcodes.
type opSet [4]uint64

func (s *opSet) has(op byte) bool { return s != nil && s[op/64]&(1<<(op%64)) != 0 }

// vexFields returns a VEX or EVEX instruction's opcode map, implied
// prefix (0 none, 1 66, 2 F3, 3 F2) and opcode, and whether it is EVEX;
// ok is false for other instructions. In 64-bit mode c4, c5 and 62 always
// start one; address-size and segment prefixes may precede them.
func vexFields(b []byte) (mmap, pp, op byte, evex, ok bool) {
	i := 0
	for i < len(b) && i < 4 && (b[i] == 0x67 || b[i] == 0x64 || b[i] == 0x65 || b[i] == 0x2e || b[i] == 0x3e || b[i] == 0x26 || b[i] == 0x36) {
		i++
	}
	switch {
	case len(b) >= i+3 && b[i] == 0xc5:
		return 1, b[i+1] & 3, b[i+2], false, true
	case len(b) >= i+4 && b[i] == 0xc4:
		return b[i+1] & 0x1f, b[i+2] & 3, b[i+3], false, true
	case len(b) >= i+5 && b[i] == 0x62:
		return b[i+1] & 7, b[i+2] & 3, b[i+4], true, true
	}
	return 0, 0, 0, false, false
}

// dyninst12Undecodable reports whether Dyninst 12.3's decoder fails on the
// instruction at the start of b, one bloop decodes (Dyninst12.Undecodable):
// a VEX or EVEX instruction whose path through its tables ends in an
// illegal entry (dyninst12Holes, dyninst12EVEXHoles), one of an opcode
// map it has no table for, or a legacy one of the illegal rows of the
// 0F groups (dyninst12GroupHole).
func (amd64) dyninst12Undecodable(b []byte) bool {
	mmap, pp, op, evex, ok := vexFields(b)
	switch {
	case !ok:
		return dyninst12GroupHole(b)
	case mmap < 1 || mmap > 3:
		return true
	}
	k := [2]byte{mmap, pp}
	return (evex || mmap == 1) && dyninstHoles[k].has(op) || evex && dyninstEVEXHoles[k].has(op)
}

// dyninst12NoReturnSyscall: Dyninst's parser gives a syscall a call edge to
// its sink and a fall-through, which it drops when the system call's
// number, the constant its slice finds in rax, is one its code source
// lists as not returning: on x86-64 exit (60) and rt_sigreturn (15), not
// exit_group. So __restore_rt (mov $0xf,%rax; syscall) does not run on
// into __libc_sigaction for hpcstruct. The number is read from the
// instructions before the syscall on the walk: the last to write eax, a
// mov of a constant; anything else leaves it unknown, taken to return.
func (amd64) dyninst12NoReturnSyscall(mem Memory, before iter.Seq[Inst], sc Inst) bool {
	if b := mem.Bytes(sc.Addr, sc.End()); len(b) != 2 || b[0] != 0x0f || b[1] != 0x05 {
		return false
	}
	for in := range before {
		x, _, ok := decodeAMD64(mem.Bytes(in.Addr, in.End()))
		if !ok {
			return false
		}
		switch x.Op {
		case x86asm.CALL, x86asm.LCALL, x86asm.SYSCALL, x86asm.CPUID, x86asm.RDTSC, x86asm.RDTSCP,
			x86asm.CWDE, x86asm.CDQE, x86asm.CBW, x86asm.LODSB, x86asm.LODSW, x86asm.LODSD, x86asm.LODSQ,
			x86asm.MUL, x86asm.IMUL, x86asm.DIV, x86asm.IDIV, x86asm.XCHG, x86asm.CMPXCHG, x86asm.XADD, x86asm.POP:
			if x.Op != x86asm.POP || isEAX(x.Args[0]) {
				return false
			}
			continue
		case x86asm.CMP, x86asm.TEST, x86asm.PUSH:
			continue
		}
		if !isEAX(x.Args[0]) {
			continue
		}
		imm, ok := x.Args[1].(x86asm.Imm)
		return x.Op == x86asm.MOV && ok && (imm == 60 || imm == 15)
	}
	return false
}

// isEAX reports whether a is rax or one of its parts.
func isEAX(a x86asm.Arg) bool {
	r, ok := a.(x86asm.Reg)
	return ok && regFamily(r) == x86asm.RAX
}

// dyninst12GroupHole reports whether b starts with a legacy instruction of
// the two-byte opcode groups that Dyninst 12.3's tables leave illegal. Its
// groups 7 (0F 01) and 9 (0F C7) are indexed by ModRM.reg alone, whatever
// the mod and the mandatory prefix, and group 15 (0F AE) by reg and
// whether mod is 11, so one illegal row stands for every instruction
// Intel later put there:
//
//	0F 01 /5       rdpkru, wrpkru, serialize, saveprevssp, rstorssp, ...
//	0F C7 /0 /2 /5 /7   xsaves; rdseed and rdpid (mod 11), vmptrst
//	0F AE /0-/4 mod 11  rdfsbase, rdgsbase, wrfsbase, wrgsbase
//
// (rdrand, 0F C7 /6, has a row: libstdc++'s __x86_rdrand keeps its retry
// loop in hpcstruct's output, and __x86_rdseed, identical but for rdseed,
// has none.)
func dyninst12GroupHole(b []byte) bool {
	i, _, ok := twoByteOpcode(b, isLegacyPrefix)
	if !ok {
		return false
	}
	op, mod, reg := b[i+1], b[i+2]>>6, (b[i+2]>>3)&7
	switch op {
	case 0x01:
		return reg == 5
	case 0xc7:
		return reg == 0 || reg == 2 || reg == 5 || reg == 7
	case 0xae:
		return mod == 3 && reg <= 4
	}
	return false
}

// isLegacyPrefix reports whether c is a legacy prefix: operand and
// address size, lock, rep, and segment overrides.
func isLegacyPrefix(c byte) bool {
	switch c {
	case 0x66, 0x67, 0xf0, 0xf2, 0xf3, 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65:
		return true
	}
	return false
}
