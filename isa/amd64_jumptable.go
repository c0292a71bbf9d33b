package isa

// x86-64 jump tables.

import (
	"encoding/binary"
	"slices"

	"golang.org/x/arch/x86/x86asm"
)

// JumpTable resolves the jump-table idioms of gcc and clang:
//
//	jmp *table(,%idx,8)                      non-PIC: absolute 8-byte entries
//	jmp *table(%rip) ... (rare)
//	lea table(%rip),%base
//	movslq (%base,%idx,4),%r ; add %base,%r ; jmp *%r   PIC: 4-byte offsets from table
//
// The table size comes from the `cmp $n; ja` that bounds the index when
// found (tableBound), else entries are read while they point into the
// procedure. The jumps these idioms do not resolve are left to the value
// analysis of amd64_values.go (valueTable): indices bounded by masks and
// by compares of two registers, tables of offsets from a code label,
// tables indexed by what another table holds, tables at an address in a
// register.
func (a amd64) JumpTable(mem Memory, path []Inst, jmp Inst, to Targets) []uint64 {
	if t := a.idiomTable(mem, path, jmp, to); t != nil {
		return t
	}
	return valueTable(mem, path, jmp, to)
}

// idiomTable resolves the idioms above by their shapes.
func (amd64) idiomTable(mem Memory, path []Inst, jmp Inst, to Targets) []uint64 {
	// Re-decode the path (Inst keeps only the control-flow summary), from
	// the jump back to the first instruction x86asm cannot read.
	var xs []x86asm.Inst
	for i := len(path) - 1; i >= 0; i-- {
		p := path[i]
		x, _, ok := decodeAMD64(mem.Bytes(p.Addr, p.Addr+uint64(p.Len)))
		if !ok {
			path = path[i+1:]
			break
		}
		xs = append(xs, x)
	}
	slices.Reverse(xs)
	n := len(xs)
	if n == 0 {
		return nil
	}
	switch a := xs[n-1].Args[0].(type) {
	case x86asm.Mem:
		if a.Base == 0 && a.Index != 0 && a.Scale == 8 {
			return readTable(mem, uint64(a.Disp), 8, 0, amd64IndexBound(xs, path, n-1, a.Index, to), to)
		}
	case x86asm.Reg:
		// Walk back to the load of the table entry: r = sext(mem[base + idx*4]),
		// then to the `lea table(%rip), base` it reads through.
		target := a
		for i := n - 2; i >= 0; i-- {
			x := xs[i]
			if x.Op != x86asm.MOVSXD && x.Op != x86asm.MOV {
				continue
			}
			r, ok := x.Args[0].(x86asm.Reg)
			m, ok2 := x.Args[1].(x86asm.Mem)
			if !ok || !ok2 || regFamily(r) != regFamily(target) {
				continue
			}
			switch m.Scale {
			case 4:
				if tb, ok := leaRIP(path, xs, i, m.Base); ok {
					return readTable(mem, tb, 4, tb, amd64IndexBound(xs, path, i, m.Index, to), to)
				}
			case 1:
				return unscaledTable(mem, path, xs, i, m, to)
			}
			return nil
		}
	}
	return nil
}

// unscaledTable resolves gcc -O0's form of the PIC idiom, where the
// index is scaled by a lea of its own and the load adds two registers:
//
//	lea 0x0(,%rax,4),%rdx ; lea table(%rip),%rax
//	mov (%rdx,%rax,1),%eax ; cltq ; lea table(%rip),%rdx ; add %rdx,%rax ; jmp *%rax
//
// xs[i] is the load, m its operand.
func unscaledTable(mem Memory, path []Inst, xs []x86asm.Inst, i int, m x86asm.Mem, to Targets) []uint64 {
	for _, r := range [][2]x86asm.Reg{{m.Base, m.Index}, {m.Index, m.Base}} {
		tb, ok := leaRIP(path, xs, i, r[0])
		if !ok {
			continue
		}
		if j, idx, ok := leaScaled(xs, i, r[1]); ok {
			return readTable(mem, tb, 4, tb, amd64IndexBound(xs, path, j, idx, to), to)
		}
	}
	return nil
}

// leaScaled finds `lea 0x0(,%idx,4), reg` as the last write of reg before
// position i and returns its position and idx.
func leaScaled(xs []x86asm.Inst, i int, reg x86asm.Reg) (int, x86asm.Reg, bool) {
	for j := i - 1; j >= 0; j-- {
		x := xs[j]
		r, ok := x.Args[0].(x86asm.Reg)
		if !ok || !writesDest(x.Op) || regFamily(r) != regFamily(reg) {
			continue
		}
		m, ok := x.Args[1].(x86asm.Mem)
		if x.Op != x86asm.LEA || !ok || m.Base != 0 || m.Index == 0 || m.Scale != 4 || m.Disp != 0 {
			return 0, 0, false
		}
		return j, m.Index, true
	}
	return 0, 0, false
}

// leaRIP finds `lea disp(%rip), reg` before position i and returns its address.
func leaRIP(path []Inst, xs []x86asm.Inst, i int, reg x86asm.Reg) (uint64, bool) {
	for j := i - 1; j >= 0; j-- {
		x := xs[j]
		if r, ok := x.Args[0].(x86asm.Reg); ok && r == reg {
			if x.Op != x86asm.LEA {
				return 0, false
			}
			m, ok := x.Args[1].(x86asm.Mem)
			if !ok || m.Base != x86asm.RIP {
				return 0, false
			}
			return uint64(int64(path[j].End()) + m.Disp), true
		}
	}
	return 0, false
}

// amd64IndexBound is tableBound, and in Dyninst's view (to.Dyninst) one entry
// where the index is a stack slot last stored an immediate
// (dyninstSlotConstant).
func amd64IndexBound(xs []x86asm.Inst, path []Inst, load int, idx x86asm.Reg, to Targets) int {
	b := tableBound(xs, path, load, idx)
	if b == 0 && to.Dyninst && dyninstSlotConstant(xs, load, idx) {
		return 1
	}
	return b
}

// dyninstSlotConstant reports whether Dyninst 12.3 takes the index
// register idx of the table load xs[load] for a constant: copied from a
// stack slot (%rsp- or %rbp-based, no index register) that the path last
// wrote with an immediate. Its index slice follows the slot back to that
// store and takes no notice of a call between, which may write the slot
// through a pointer (glibc's parse_bracket_exp: movl $0x3,0xd0(%rsp)
// before parse_bracket_element(&start_elem, ...), whose result sets the
// slot, then mov 0xd0(%rsp),%r13d; mov %r13d,%r10d; movslq
// (%rcx,%r10,4),%rax). A constant bound is an interval of stride 0, and
// Dyninst's ReadTable starts at index 0 whatever the interval's low end
// and reads one entry at stride 0: the table's first entry is the only
// target (hpcstruct's loops in parse_expression have entry 0's code, 0xe8bee,
// and none of entries 1 to 4's). The stack pointer must not move between
// the store and the load.
func dyninstSlotConstant(xs []x86asm.Inst, load int, idx x86asm.Reg) bool {
	cur := regFamily(idx)
	for i := load - 1; i >= 0; i-- {
		x := xs[i]
		d, ok := x.Args[0].(x86asm.Reg)
		if !ok || !writesDest(x.Op) || regFamily(d) != cur {
			continue
		}
		if !isCopy(x.Op) {
			return false
		}
		switch s := x.Args[1].(type) {
		case x86asm.Reg:
			cur = regFamily(s)
			continue
		case x86asm.Mem:
			b := regFamily(s.Base)
			if s.Segment != 0 || s.Index != 0 || b != x86asm.RSP && b != x86asm.RBP {
				return false
			}
			for j := i - 1; j >= 0; j-- {
				y := xs[j]
				switch y.Op {
				case x86asm.PUSH, x86asm.POP, x86asm.PUSHF, x86asm.POPF, x86asm.ENTER, x86asm.LEAVE:
					return false
				}
				switch a := y.Args[0].(type) {
				case x86asm.Reg:
					if writesDest(y.Op) && regFamily(a) == b {
						return false
					}
				case x86asm.Mem:
					if a == s && writesDest(y.Op) {
						_, imm := y.Args[1].(x86asm.Imm)
						return y.Op == x86asm.MOV && imm
					}
				}
			}
		}
		return false
	}
	return false
}

// tableBound returns the number of entries of the table that xs[load]
// indexes with register idx, or 0 when unknown; path holds the addresses
// of xs. It walks back from the load, following where the index came from
// (register copies, right shifts, a load from memory), to the compare and
// unsigned branch that bound it on the path taken:
//
//	cmp $0x1f,%ecx; ja                            32 entries
//	cmp $0xe,%edx; jbe (taken)                    15
//	cmp $0x4d,%ecx; jg ...; ja                    the ja reads the cmp's flags: 78
//	mov %edx,%ecx; sar $3,%ecx; cmp $0x47,%edx; ja   ecx = edx>>3 <= 8: 9
//	cmpl $5,0x78(%rbx); ...; ja; mov 0x78(%rbx),%eax   6
//
// Without it the table is read on into the next one, whose targets lie
// inside instructions (libjvm's Canonicalizer::do_If, ciMethodData::load_data).
func tableBound(xs []x86asm.Inst, path []Inst, load int, idx x86asm.Reg) int {
	cur := location{reg: regFamily(idx)} // what the index is computed from
	shift := 0
	var b *branchBound // the bounding branch above the load in use
	for i := load - 1; i >= 0; i-- {
		x := xs[i]
		if bb, ok := unsignedBound(xs, path, i); ok && (b == nil || i < b.cmp && bb.at == cur) {
			// The nearest bound, or one further up of what the index
			// comes from there when the nearest compares another value
			// (zstd's bit readers: cmp $7,%rsi; jbe, then cmp $7,%r9w;
			// ja and the load indexed by %rsi).
			b = &bb
			continue
		}
		if b != nil && i == b.cmp {
			if b.at == cur {
				return ((b.count - 1) >> shift) + 1
			}
			continue // the index may still be computed from b.at above
		}
		if x.Op == x86asm.CALL {
			return 0 // the call may change what the index comes from
		}
		dst, ok := x.Args[0].(x86asm.Reg)
		if !ok || !writesDest(x.Op) {
			continue
		}
		dst = regFamily(dst)
		if b != nil && i < b.cmp && b.at == (location{reg: dst}) {
			// The compared register is set here. When it is copied from
			// what the index comes from (gcc recomputes the index after
			// the compare: movzwl %bp,%eax; cmp; ja; movzwl %bp,%eax),
			// the bound holds for the index; else it says nothing.
			if src, ok := locationOf(x.Args[1]); ok && isCopy(x.Op) && src == cur {
				return ((b.count - 1) >> shift) + 1
			}
			b = nil
		}
		if cur != (location{reg: dst}) {
			continue
		}
		switch {
		case isCopy(x.Op):
			src, ok := locationOf(x.Args[1])
			if !ok {
				return 0
			}
			cur = src
		case x.Op == x86asm.SAR || x.Op == x86asm.SHR:
			imm, ok := x.Args[1].(x86asm.Imm)
			if !ok || imm < 0 || imm > 63 {
				return 0
			}
			shift += int(imm)
		default:
			return 0
		}
		if b != nil && i < b.cmp && b.at == cur {
			return ((b.count - 1) >> shift) + 1
		}
	}
	return 0
}

// isCopy reports whether op copies its source into its destination,
// extended to the destination's width.
func isCopy(op x86asm.Op) bool {
	return op == x86asm.MOV || op == x86asm.MOVZX || op == x86asm.MOVSXD
}

// location is a register (by family) or a memory operand.
type location struct {
	reg   x86asm.Reg
	mem   x86asm.Mem
	isMem bool
}

func locationOf(a x86asm.Arg) (location, bool) {
	switch a := a.(type) {
	case x86asm.Reg:
		return location{reg: regFamily(a)}, true
	case x86asm.Mem:
		return location{mem: a, isMem: true}, true
	}
	return location{}, false
}

// branchBound is `cmp $n, at` at index cmp, read by an unsigned branch:
// at has count values on the path that falls through.
type branchBound struct {
	at    location
	count int
	cmp   int
}

// unsignedBound recognizes xs[i] as an unsigned branch whose flags come
// from `cmp $n, x` (only flag-neutral instructions between) and that
// bounds x on the edge the path follows: ja and jae fall through in
// range, jbe and jb jump.
func unsignedBound(xs []x86asm.Inst, path []Inst, i int) (branchBound, bool) {
	op := xs[i].Op
	taken := i+1 < len(path) && path[i+1].Addr != path[i].End()
	var inclusive bool // the compared value itself is in range
	switch {
	case op == x86asm.JA && !taken, op == x86asm.JBE && taken:
		inclusive = true
	case op == x86asm.JAE && !taken, op == x86asm.JB && taken:
	default:
		return branchBound{}, false
	}
	k := i - 1
	for k > 0 && keepsFlags(xs[k].Op) {
		k--
	}
	if k < 0 || xs[k].Op != x86asm.CMP {
		return branchBound{}, false
	}
	imm, ok := xs[k].Args[1].(x86asm.Imm)
	if !ok || imm < 0 || imm >= maxTable {
		return branchBound{}, false
	}
	b := branchBound{count: int(imm), cmp: k}
	if inclusive {
		b.count++
	}
	at, ok := locationOf(xs[k].Args[0])
	if !ok {
		return branchBound{}, false
	}
	b.at = at
	return b, true
}

// regFamily maps a register of any width to its 64-bit register, so that
// %ecx and %rcx are the same index.
func regFamily(r x86asm.Reg) x86asm.Reg {
	switch {
	case r >= x86asm.RAX && r <= x86asm.R15:
		return r
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return x86asm.RAX + (r - x86asm.EAX)
	case r >= x86asm.AX && r <= x86asm.R15W:
		return x86asm.RAX + (r - x86asm.AX)
	case r >= x86asm.AL && r <= x86asm.BL:
		return x86asm.RAX + (r - x86asm.AL)
	case r >= x86asm.AH && r <= x86asm.BH:
		return x86asm.RAX + (r - x86asm.AH)
	case r >= x86asm.SPB && r <= x86asm.R15B:
		return x86asm.RSP + (r - x86asm.SPB)
	}
	return r
}

// writesDest reports whether op writes its first operand (x86asm lists
// the destination first); compares, tests and stores to memory do not.
func writesDest(op x86asm.Op) bool {
	switch op {
	case x86asm.CMP, x86asm.TEST, x86asm.PUSH, x86asm.BT, x86asm.NOP:
		return false
	}
	return !isJcc(op)
}

func isJcc(op x86asm.Op) bool {
	switch op {
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE,
		x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO,
		x86asm.JP, x86asm.JS:
		return true
	}
	return false
}

// keepsFlags reports whether op never writes the arithmetic flags: the
// moves, string stores, vector moves and logic, and address computations
// compilers schedule between a compare and its branch (libdb's __db_pgout
// has `rep stos`, movhps and movups between `cmpb $0x10` and its ja).
func keepsFlags(op x86asm.Op) bool {
	return flagNeutral[op] || isJcc(op)
}

var flagNeutral = func() map[x86asm.Op]bool {
	m := map[x86asm.Op]bool{}
	for _, op := range []x86asm.Op{
		x86asm.MOV, x86asm.MOVSXD, x86asm.MOVSX, x86asm.MOVZX, x86asm.MOVBE, x86asm.LEA, x86asm.NOP,
		x86asm.PUSH, x86asm.POP, x86asm.XCHG, x86asm.BSWAP, x86asm.NOT, x86asm.CDQE, x86asm.CWDE,
		x86asm.CQO, x86asm.CDQ, x86asm.LFENCE, x86asm.SFENCE, x86asm.MFENCE, x86asm.PREFETCHT0,
		x86asm.PREFETCHNTA, x86asm.MOVNTI,
		x86asm.STOSB, x86asm.STOSW, x86asm.STOSD, x86asm.STOSQ, x86asm.MOVSB, x86asm.MOVSW,
		x86asm.MOVSD, x86asm.MOVSQ, x86asm.LODSB, x86asm.LODSQ,
		x86asm.MOVAPS, x86asm.MOVUPS, x86asm.MOVAPD, x86asm.MOVUPD, x86asm.MOVQ, x86asm.MOVD,
		x86asm.MOVSD_XMM, x86asm.MOVSS, x86asm.MOVDQA, x86asm.MOVDQU, x86asm.MOVHPS, x86asm.MOVLPS,
		x86asm.MOVHPD, x86asm.MOVLPD, x86asm.MOVHLPS, x86asm.MOVLHPS, x86asm.PXOR, x86asm.XORPS,
		x86asm.XORPD, x86asm.PAND, x86asm.POR, x86asm.ANDPS, x86asm.ORPS, x86asm.PSHUFD,
		x86asm.PUNPCKLQDQ, x86asm.UNPCKLPS, x86asm.SHUFPS, x86asm.CVTSI2SD, x86asm.CVTSI2SS,
		x86asm.VMOVDQU, x86asm.VMOVDQA, x86asm.VMOVUPS, x86asm.VMOVAPS, x86asm.VPXOR, x86asm.VZEROUPPER,
		x86asm.SETA, x86asm.SETAE, x86asm.SETB, x86asm.SETBE, x86asm.SETE, x86asm.SETNE, x86asm.SETG,
		x86asm.SETGE, x86asm.SETL, x86asm.SETLE, x86asm.SETS, x86asm.SETNS, x86asm.SETO, x86asm.SETNO,
		x86asm.SETP, x86asm.SETNP,
		x86asm.CMOVA, x86asm.CMOVAE, x86asm.CMOVB, x86asm.CMOVBE, x86asm.CMOVE, x86asm.CMOVNE,
		x86asm.CMOVG, x86asm.CMOVGE, x86asm.CMOVL, x86asm.CMOVLE, x86asm.CMOVS, x86asm.CMOVNS,
	} {
		m[op] = true
	}
	return m
}()

// readTable reads a table of absolute 8-byte targets, or of 4-byte
// offsets from rel.
func readTable(mem Memory, table uint64, size int, rel uint64, bound int, to Targets) []uint64 {
	return readEntries(mem, table, size, bound, func(b []byte) uint64 {
		if size == 8 {
			return binary.LittleEndian.Uint64(b)
		}
		return uint64(int64(rel) + int64(int32(binary.LittleEndian.Uint32(b))))
	}, to)
}
