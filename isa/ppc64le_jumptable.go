package isa

// ppc64le jump tables. gcc and clang both load a 4-byte offset from a table
// and add the table's address (gcc: TOC-relative; clang hoists the base
// out of loops; glibc loads it from a TOC slot):
//
//	gcc -O2:  cmplwi r9,7 ; bgt default
//	          addis r8,r2,hi ; addi r8,r8,lo      table = TOC + hi<<16 + lo
//	          rldic r9,r9,2,30 ; lwax r9,r8,r9 ; add r9,r9,r8 ; mtctr r9 ; bctr
//	gcc -O0:  sldi r10,r9,2 ; add r9,r10,r9 ; lwz r9,0(r9) ; extsw r10,r9 ; add ...
//	clang:    addis r7,r2,hi ; addi r7,r7,lo (before the loop)
//	          clrlwi r9,r8,16 ; cmplwi r9,7 ; bgt ; rldic r8,r8,2,46
//	          lwax r8,r8,r7 ; add r8,r8,r7 ; mtctr r8 ; bctr
//	glibc:    ld r10,off(r2) ; rldic r9,r9,2,30 ; lwax r9,r10,r9 ; add r9,r9,r10 ; ...
//
// Rather than matching each shape, the path to the bctr is executed
// symbolically: registers hold constants, an unknown value times a scale
// plus a constant, or a value loaded from such an address plus a
// constant. CTR must come out as table entry + base with the table
// address linear in one unknown (the index), and an unsigned compare on
// the path that the taken branch bounds gives the number of entries.

import (
	"encoding/binary"
	"math/bits"
	"strings"

	"golang.org/x/arch/ppc64/ppc64asm"
)

// lin is c + s*x, x an unknown value (0: none, a constant).
type lin struct {
	c, s int64
	x    int
}

// val is what a register holds on the path: lin, or a table entry loaded
// from addr plus lin.c (when size > 0); opaque values are a lin of a
// fresh unknown.
type val struct {
	lin
	size   int  // bytes loaded, 0: not a load
	signed bool // the load sign-extends
	addr   lin  // where it was loaded from
}

func (v val) isLoad() bool { return v.size > 0 }

// jtState is the symbolic machine.
type jtState struct {
	reg      [33]val // by ppc64asm.Reg (R0..R31 are 1..32)
	ctr      val
	mem      map[memKey]val // the unknown each variable's address was read as
	fresh    int
	cmp      [8]*cmpImm // the last compare with an immediate per CR field
	bound    *indexBound
	tocKnown bool   // r2 holds the module's TOC base
	image    Memory // for TOC slots
}

type memKey struct {
	a    lin
	size int
}

// cmpImm is `cmplwi crF,rA,n` (or cmpldi): v compared with n, unsigned.
type cmpImm struct {
	v lin
	n int64
}

// indexBound says that v takes count values 0..count-1 on the path.
type indexBound struct {
	v     lin
	count int64
}

func (st *jtState) unknown() val {
	st.fresh++
	return val{lin: lin{s: 1, x: st.fresh}}
}

// JumpTable resolves the bctr jmp from the instructions that lead to it.
func (p ppc64le) JumpTable(mem Memory, path []Inst, jmp Inst, to Targets) []uint64 {
	st := &jtState{mem: map[memKey]val{}, image: mem}
	for r := range st.reg {
		st.reg[r] = st.unknown()
	}
	if p.toc != 0 {
		st.reg[ppc64asm.R2] = val{lin: lin{c: int64(p.toc)}}
		st.tocKnown = true
	}
	for i := 0; i < len(path)-1; i++ {
		x, ok := decodePPC(mem.Bytes(path[i].Addr, path[i].End()))
		if !ok {
			continue
		}
		taken := path[i+1].Addr != path[i].End()
		st.step(x, path[i], taken)
	}
	return st.table(mem, to)
}

// table reads the entries once CTR is known: ctr = base + entry, entry
// at addr = A + S*x.
func (st *jtState) table(mem Memory, to Targets) []uint64 {
	t := st.ctr
	if !t.isLoad() || t.s != 0 || t.addr.x == 0 || t.addr.s != int64(t.size) {
		return nil
	}
	first, count := t.addr.c, int64(0)
	if b := st.bound; b != nil && b.v.x == t.addr.x && b.v.s == 1 {
		// x + b.v.c runs over 0..count-1: the first entry is where x = -b.v.c.
		first, count = t.addr.c-b.v.c*t.addr.s, b.count
	}
	return readEntries(mem, uint64(first), t.size, int(count), func(b []byte) uint64 {
		var e int64
		switch {
		case t.size == 8:
			e = int64(binary.LittleEndian.Uint64(b))
		case t.signed:
			e = int64(int32(binary.LittleEndian.Uint32(b)))
		default:
			e = int64(binary.LittleEndian.Uint32(b))
		}
		return uint64(t.c + e)
	}, to)
}

func (st *jtState) get(a ppc64asm.Arg) val {
	if r, ok := a.(ppc64asm.Reg); ok && r >= ppc64asm.R0 && r <= ppc64asm.R31 {
		return st.reg[r]
	}
	return st.unknown()
}

// base is a register operand read as an address base: r0 reads as 0.
func (st *jtState) base(a ppc64asm.Arg) val {
	if r, ok := a.(ppc64asm.Reg); ok && r == ppc64asm.R0 {
		return val{}
	}
	return st.get(a)
}

func (st *jtState) set(a ppc64asm.Arg, v val) {
	if r, ok := a.(ppc64asm.Reg); ok && r >= ppc64asm.R0 && r <= ppc64asm.R31 {
		if r == ppc64asm.R2 && st.tocKnown {
			return // r2 is the TOC base all through the module: set at the global entry, restored after calls
		}
		st.reg[r] = v
	}
}

func konst(c int64) val { return val{lin: lin{c: c}} }

// add is a + b where the sum stays representable, else unknown.
func (st *jtState) add(a, b val) val {
	if a.isLoad() && b.isLoad() {
		return st.unknown()
	}
	if b.isLoad() {
		a, b = b, a
	}
	switch {
	case b.x == 0:
		a.c += b.c
		return a
	case a.isLoad() || a.x != 0 && a.x != b.x:
		return st.unknown()
	}
	return val{lin: lin{c: a.c + b.c, s: a.s + b.s, x: b.x}}
}

// shl is v << n, for an index only by the scales tables have.
func (st *jtState) shl(v val, n int64) val {
	if v.isLoad() || n < 0 || n > 63 || n > 3 && v.x != 0 {
		return st.unknown()
	}
	return val{lin: lin{c: v.c << n, s: v.s << n, x: v.x}}
}

// load is the value of size bytes at addr: an entry where addr steps by
// size with an unknown (a table), the address a TOC slot holds, else a
// variable: the same unknown for each load of one address until a store
// to it or a call (gcc -O0 compares the index and loads it again from its
// stack slot; a global is read once for the compare, once for the load).
func (st *jtState) load(addr val, size int, signed bool) val {
	switch {
	case addr.isLoad():
		return st.unknown()
	case addr.x != 0 && addr.s == int64(size):
		return val{size: size, signed: signed, addr: addr.lin}
	case addr.x == 0 && size == 8:
		// A TOC slot holding the table's address (glibc's jump tables:
		// ld r10,off(r2)); the file holds the link-time value.
		if b := st.image.ReadData(uint64(addr.c), 8); b != nil && binary.LittleEndian.Uint64(b) != 0 {
			return konst(int64(binary.LittleEndian.Uint64(b)))
		}
	}
	k := memKey{addr.lin, size}
	if v, ok := st.mem[k]; ok {
		return v
	}
	v := st.unknown()
	st.mem[k] = v
	return v
}

// step executes x (at in, whose successor on the path is taken or not).
func (st *jtState) step(x ppc64asm.Inst, in Inst, taken bool) {
	a := x.Args
	switch x.Op {
	case ppc64asm.LI: // ppc64asm's own op for addi rD,0,imm
		st.set(a[0], konst(int64(a[1].(ppc64asm.Imm))))
	case ppc64asm.LIS:
		st.set(a[0], konst(int64(a[1].(ppc64asm.Imm))<<16))
	case ppc64asm.NOP:
	case ppc64asm.ADDI:
		st.set(a[0], st.add(st.base(a[1]), konst(int64(a[2].(ppc64asm.Imm)))))
	case ppc64asm.ADDIS:
		st.set(a[0], st.add(st.base(a[1]), konst(int64(a[2].(ppc64asm.Imm))<<16)))
	case ppc64asm.ADD:
		st.set(a[0], st.add(st.get(a[1]), st.get(a[2])))
	case ppc64asm.OR:
		if a[1] == a[2] { // mr
			st.set(a[0], st.get(a[1]))
		} else {
			st.set(a[0], st.unknown())
		}
	case ppc64asm.ORI:
		if v := st.get(a[1]); !v.isLoad() && v.x == 0 {
			st.set(a[0], konst(v.c|int64(a[2].(ppc64asm.Imm))))
		} else {
			st.set(a[0], st.unknown())
		}
	case ppc64asm.RLDICL, ppc64asm.RLDICR, ppc64asm.RLDIC, ppc64asm.RLWINM:
		st.set(a[0], st.rotate(x))
	case ppc64asm.EXTSW:
		v := st.get(a[1])
		switch {
		case v.isLoad() && v.size == 4:
			v.signed = true
		case !v.isLoad() && v.x == 0:
			v.c = int64(int32(v.c))
		}
		st.set(a[0], v) // an index keeps its unknown
	case ppc64asm.LWAX, ppc64asm.LWZX, ppc64asm.LDX:
		st.set(a[0], st.load(st.add(st.base(a[1]), st.get(a[2])), loadSize(x.Op), x.Op == ppc64asm.LWAX))
	case ppc64asm.LWA, ppc64asm.LWZ, ppc64asm.LD:
		addr := st.add(st.base(a[2]), konst(int64(a[1].(ppc64asm.Offset))))
		st.set(a[0], st.load(addr, loadSize(x.Op), x.Op == ppc64asm.LWA))
	case ppc64asm.STW, ppc64asm.STD:
		// The stored value is not followed: a constant stored before a
		// loop (its first iteration's) would hide the index.
		addr := st.add(st.base(a[2]), konst(int64(a[1].(ppc64asm.Offset))))
		delete(st.mem, memKey{addr.lin, 4})
		delete(st.mem, memKey{addr.lin, 8})
	case ppc64asm.MTSPR:
		if a[0] == ppc64asm.SpReg(9) {
			st.ctr = st.get(a[1])
		}
	case ppc64asm.CMPLWI, ppc64asm.CMPLDI, ppc64asm.CMPLW, ppc64asm.CMPLD:
		cr, ok := a[0].(ppc64asm.CondReg)
		if !ok || cr < ppc64asm.CR0 || cr > ppc64asm.CR7 {
			break
		}
		st.cmp[cr-ppc64asm.CR0] = nil
		n, ok := a[2].(ppc64asm.Imm)
		if v := st.get(a[2]); !ok && !v.isLoad() && v.x == 0 {
			n, ok = ppc64asm.Imm(v.c), true // cmplw with a register set to a constant
		}
		v := st.get(a[1])
		if ok && !v.isLoad() && v.x == 0 {
			// Compilers do not test constants: this one is the value
			// before a loop on the path taken back (fileline_initialize
			// in libasan: li r31,0 ... cmplwi r31,7), and varies.
			v = st.unknown()
			st.set(a[1], v)
		}
		if ok && !v.isLoad() {
			st.cmp[cr-ppc64asm.CR0] = &cmpImm{v: v.lin, n: int64(n)}
		}
	case ppc64asm.BC:
		st.branchBound(x, taken)
	default:
		st.clobber(x, in)
	}
}

// rotate executes the rotate-and-mask instructions: exactly on a
// constant; on an index, as a shift left when the mask clears only bits
// above the shifted value (sldi, slwi, rldic, clrldi, clrlwi: a
// narrower index is the same index for the compare that bounds it).
func (st *jtState) rotate(x ppc64asm.Inst) val {
	a := x.Args
	imm := func(i int) uint { return uint(a[i].(ppc64asm.Imm)) }
	var sh, mb, me uint // rotate left by sh, keep bits mb..me (bit 0 the most significant)
	word := false
	switch x.Op {
	case ppc64asm.RLDICL:
		sh, mb, me = imm(2), imm(3), 63
	case ppc64asm.RLDICR:
		sh, mb, me = imm(2), 0, imm(3)
	case ppc64asm.RLDIC:
		sh, mb, me = imm(2), imm(3), 63-imm(2)
	default: // RLWINM works on the low word, rotated into both halves
		sh, mb, me, word = imm(2), imm(3)+32, imm(4)+32, true
	}
	v := st.get(a[1])
	switch {
	case !v.isLoad() && v.x == 0:
		r := bits.RotateLeft64(uint64(v.c), int(sh))
		if word {
			w := uint64(bits.RotateLeft32(uint32(v.c), int(sh)))
			r = w<<32 | w
		}
		return konst(int64(r & maskBits(mb, me)))
	case me == 63-sh:
		return st.shl(v, int64(sh))
	}
	return st.unknown()
}

// maskBits has bits mb through me set, bit 0 the most significant; a
// mask with mb > me wraps around.
func maskBits(mb, me uint) uint64 {
	hi, lo := ^uint64(0)>>mb, ^uint64(0)<<(63-me)
	if mb <= me {
		return hi & lo
	}
	return hi | lo
}

func loadSize(op ppc64asm.Op) int {
	if op == ppc64asm.LDX || op == ppc64asm.LD {
		return 8
	}
	return 4
}

// branchBound records the bound a conditional branch on an unsigned
// compare puts on the path: v <= n where bgt falls through or ble is
// taken, v < n where bge falls through or blt is taken.
func (st *jtState) branchBound(x ppc64asm.Inst, taken bool) {
	bo := uint32(x.Args[0].(ppc64asm.Imm))
	bi, ok := x.Args[1].(ppc64asm.CondReg)
	if !ok || bo&0x04 == 0 || bo&0x10 != 0 || bi < ppc64asm.Cond0LT || bi > ppc64asm.Cond7SO {
		return // decrements CTR, or unconditional
	}
	field, bit := (bi-ppc64asm.Cond0LT)/4, (bi-ppc64asm.Cond0LT)%4
	c := st.cmp[field]
	if c == nil {
		return
	}
	ifTrue := bo&0x08 != 0
	var count int64
	switch {
	case bit == 1 && ifTrue != taken: // bgt not taken, ble taken: v <= n
		count = c.n + 1
	case bit == 0 && ifTrue == taken: // blt taken, bge not taken: v < n
		count = c.n
	default:
		return
	}
	if count > 0 && count <= maxTable {
		st.bound = &indexBound{v: c.v, count: count}
	}
}

// clobber gives every register x may write an unknown value: a call
// the volatile ones and memory, an instruction its first operand (the
// target of all but stores, compares and branches) and an updated base;
// and forgets the compares whose CR field x overwrites.
func (st *jtState) clobber(x ppc64asm.Inst, in Inst) {
	if in.Kind == Call || in.Kind == IndirectCall {
		for r := ppc64asm.R0; r <= ppc64asm.R12; r++ {
			if r != ppc64asm.R1 && r != ppc64asm.R2 {
				st.reg[r] = st.unknown()
			}
		}
		st.ctr = st.unknown()
		st.mem = map[memKey]val{}
		return
	}
	op := x.Op.String()
	// A signed or floating compare replaces its CR field's unsigned one,
	// a record form (add., andi.) CR0's.
	if cr, ok := x.Args[0].(ppc64asm.CondReg); ok && cr >= ppc64asm.CR0 && cr <= ppc64asm.CR7 {
		st.cmp[cr-ppc64asm.CR0] = nil
	}
	if strings.HasSuffix(op, ".") {
		st.cmp[0] = nil
	}
	store := strings.HasPrefix(op, "st")
	if !store && !strings.HasPrefix(op, "cmp") && !strings.HasPrefix(op, "t") &&
		!strings.HasPrefix(op, "b") && !strings.HasPrefix(op, "dcb") && !strings.HasPrefix(op, "icb") {
		st.set(x.Args[0], st.unknown())
	}
	if (store || strings.HasPrefix(op, "l")) && (strings.HasSuffix(op, "u") || strings.HasSuffix(op, "ux")) {
		if x.Args[2] != nil {
			if _, isOff := x.Args[1].(ppc64asm.Offset); isOff {
				st.set(x.Args[2], st.unknown())
			} else {
				st.set(x.Args[1], st.unknown())
			}
		}
	}
	if store {
		st.mem = map[memKey]val{} // it may overwrite a slot the index was read from
	}
}
