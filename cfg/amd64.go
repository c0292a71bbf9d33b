package cfg

import (
	"encoding/binary"

	"golang.org/x/arch/x86/x86asm"

	"bloop/loader"
)

// amd64 decodes x86-64 with golang.org/x/arch/x86/x86asm.
type amd64 struct{}

func (amd64) decode(b []byte, addr uint64) Inst {
	// x86asm decodes endbr64 (f3 0f 1e fa) as a bare prefix of length 1; treat it as one instruction.
	if len(b) >= 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && (b[3] == 0xfa || b[3] == 0xfb) {
		return Inst{Addr: addr, Len: 4, Kind: Other}
	}
	x, err := x86asm.Decode(b, 64)
	if err != nil || x.Len == 0 {
		// After an error Len cannot be trusted: skip one byte.
		return Inst{Addr: addr, Len: 1, Kind: Invalid}
	}
	in := Inst{Addr: addr, Len: x.Len}
	rel := func() (uint64, bool) {
		if r, ok := x.Args[0].(x86asm.Rel); ok {
			return uint64(int64(addr) + int64(x.Len) + int64(r)), true
		}
		return 0, false
	}
	switch x.Op {
	case x86asm.JMP:
		if t, ok := rel(); ok {
			in.Kind, in.Target = Jump, t
		} else {
			in.Kind = IndirectJump
		}
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE,
		x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO,
		x86asm.JP, x86asm.JS, x86asm.JCXZ, x86asm.JECXZ, x86asm.JRCXZ,
		x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		if t, ok := rel(); ok {
			in.Kind, in.Target = CondJump, t
		}
	case x86asm.CALL:
		if t, ok := rel(); ok {
			in.Kind, in.Target = Call, t
		} else {
			in.Kind = IndirectCall
		}
	case x86asm.RET, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ, x86asm.SYSRET:
		in.Kind = Return
	case x86asm.HLT, x86asm.UD2, x86asm.UD1, x86asm.UD0, x86asm.INT:
		if x.Op == x86asm.INT && len(b) > 0 && b[0] != 0xcc {
			break // int $n (syscalls of old code) returns
		}
		in.Kind = Halt
	}
	return in
}

// maxTable bounds a jump table whose size no compare gives.
const maxTable = 4096

// jumpTable resolves the jump-table idioms of gcc and clang:
//
//	jmp *table(,%idx,8)                      non-PIC: absolute 8-byte entries
//	jmp *table(%rip) ... (rare)
//	lea table(%rip),%base
//	movslq (%base,%idx,4),%r ; add %base,%r ; jmp *%r   PIC: 4-byte offsets from table
//
// The table size comes from the dominating `cmp $n,%idx; ja` when found,
// else entries are read while they point into the procedure.
func (amd64) jumpTable(img *loader.Image, path []Inst, jmp Inst, lo, hi uint64) []uint64 {
	n := len(path)
	if n == 0 {
		return nil
	}
	// Re-decode the path: Inst keeps only the control-flow summary.
	xs := make([]x86asm.Inst, n)
	for i, p := range path {
		b := img.Bytes(p.Addr, p.Addr+uint64(p.Len))
		x, err := x86asm.Decode(b, 64)
		if err != nil {
			return nil
		}
		xs[i] = x
	}
	last := xs[n-1]
	bound := tableBound(xs)
	switch a := last.Args[0].(type) {
	case x86asm.Mem:
		if a.Base == 0 && a.Index != 0 && a.Scale == 8 {
			return readTable(img, uint64(a.Disp), 8, 0, bound, lo, hi)
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
			if !ok || !ok2 || r != target || m.Scale != 4 {
				continue
			}
			if tb, ok := leaRIP(path, xs, i, m.Base); ok {
				return readTable(img, tb, 4, tb, bound, lo, hi)
			}
			return nil
		}
	}
	return nil
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

// tableBound finds `cmp $n, reg` followed by `ja`/`jae` and returns the entry count.
func tableBound(xs []x86asm.Inst) int {
	for i := len(xs) - 2; i >= 1; i-- {
		if xs[i].Op != x86asm.JA && xs[i].Op != x86asm.JAE && xs[i].Op != x86asm.JBE && xs[i].Op != x86asm.JB {
			continue
		}
		c := xs[i-1]
		if c.Op != x86asm.CMP {
			return 0
		}
		imm, ok := c.Args[1].(x86asm.Imm)
		if !ok || imm < 0 || imm >= maxTable {
			return 0
		}
		if xs[i].Op == x86asm.JA || xs[i].Op == x86asm.JBE {
			return int(imm) + 1
		}
		return int(imm)
	}
	return 0
}

func readTable(img *loader.Image, table uint64, size int, rel uint64, bound int, lo, hi uint64) []uint64 {
	limit := bound
	if limit == 0 {
		limit = maxTable
	}
	var out []uint64
	for k := 0; k < limit; k++ {
		b := img.ReadData(table+uint64(k*size), size)
		if b == nil {
			break
		}
		var t uint64
		if size == 8 {
			t = binary.LittleEndian.Uint64(b)
		} else {
			t = uint64(int64(rel) + int64(int32(binary.LittleEndian.Uint32(b))))
		}
		if t < lo || t >= hi {
			if bound == 0 {
				break
			}
			continue
		}
		out = append(out, t)
	}
	return out
}
