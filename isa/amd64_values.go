package isa

// A value analysis of x86-64 code along one path, for the jump tables the
// compare-and-load idioms of amd64_jumptable.go do not cover: it follows
// what every instruction on the path to an indirect jump does to the
// general registers, in terms of unknown values ("roots": what a register
// held where the path starts, what a load from unknown memory gave) whose
// ranges the path's masks and branches narrow, so that the jump's target
// comes out as a table entry read at a bounded index:
//
//	and $0xf,%ecx; and $0xf,%eax; cmp %eax,%ecx; je; ja     ecx, eax in [0,15], ecx < eax
//	xchg %eax,%ecx; lea 0xf(%rax),%r9; sub %rcx,%r9         r9 = 15 + eax - ecx in [0,14]
//	lea table(%rip),%r10; movslq (%r10,%r9,4),%r9; lea (%r10,%r9,1),%r10; jmp *%r10
//
// glibc's str(n)(case)cmp_sse2/sse42; a byte table that maps a character
// to the index of a table of offsets from a code label (glibc's printf
// computed gotos: lea -0x20(%r9),%eax; cmp $0x5a,%al; jbe, then
// movzbl (%rcx,%rax,1),%eax; movslq (%rsi,%rax,4),%rax; add %rcx,%rax);
// absolute entries at a table whose address is in a register
// (lea table(%rip),%rdx; jmp *(%rdx,%rax,8)).
//
// A value is linear in at most two roots (v = c1*r1 + c2*r2 + k), held by
// a register modulo 2^w for the width w it was written at, so that 8- and
// 32-bit compares and sign and zero extensions are exact where the ranges
// allow and give a new root where they do not. Besides each root's range,
// branches comparing two registers bound the difference of two roots
// (relations): without them the strcmp index above is in [0,30], and the
// table is read past its end into the next one. Dyninst 12.3 bounds it so:
// its view (Targets.Dyninst) keeps no relations, and reads a table as
// Dyninst's ReadTable does, up to the first entry whose code is junk
// (dyninstJunk), so that of glibc's eight such functions five parse into
// the next function's code (the sse42 ones in part) and three stop at the
// next table's first entry (see pipeline/real_test.go).

import (
	"math/bits"
	"slices"

	"golang.org/x/arch/x86/x86asm"
)

// inf stands for "unbounded": ranges are clamped to [-inf, inf], far
// beyond any table index or address.
const inf = int64(1) << 62

type ival struct{ lo, hi int64 }

var full = ival{-inf, inf}

func (a ival) empty() bool { return a.lo > a.hi }

func (a ival) meet(b ival) ival { return ival{max(a.lo, b.lo), min(a.hi, b.hi)} }

func (a ival) within(b ival) bool { return !a.empty() && a.lo >= b.lo && a.hi <= b.hi }

func clamp(x int64) int64 { return max(-inf, min(inf, x)) }

// satAdd adds two clamped values; the sum stays clamped.
func satAdd(a, b int64) int64 { return clamp(a + b) }

// satMul multiplies a clamped value by c.
func satMul(a, c int64) int64 {
	if a == 0 || c == 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(abs(a)), uint64(abs(c)))
	if hi != 0 || lo >= uint64(inf) {
		if (a < 0) != (c < 0) {
			return -inf
		}
		return inf
	}
	return clamp(a * c)
}

func abs(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// root is an unknown value: its range, the values a table load gave it
// (in the order of the table's indices; nil when any value of the range
// may be), and the values branches exclude.
type root struct {
	r     ival
	vals  []int64
	ne    []int64
	table bool // loaded from memory at a bounded index
	// For a table load: the base and index registers of its address (by
	// family; 0: none) and the root of its index (-1: none).
	addrRegs [2]x86asm.Reg
	index    int
}

type term struct {
	root int
	c    int64
}

// vlin is c1*root1 + c2*root2 + k; n terms are used.
type vlin struct {
	t [2]term
	n int
	k int64
}

func constLin(k int64) vlin { return vlin{k: clamp(k)} }

// regVal is what a register holds: v modulo 2^w, zero-extended (w is 8,
// 16, 32 or 64; 8 and 16 only for views of part of a register).
type regVal struct {
	v vlin
	w uint8
}

type cmpFact struct {
	a, b regVal // compared at width a.w (== b.w): flags of a - b
}

type values struct {
	roots []root
	regs  map[x86asm.Reg]regVal // by family (regFamily)
	proj  map[[2]int]int        // (root, width) -> the root of its low bits
	fresh map[regVal]int        // values normalized to a root of their own
	rel   map[[2]int]ival       // (a, b), a < b: range of root a - root b
	relNe map[[2]int][]int64
	loads map[vmemKey]regVal // loads from unknown memory since the last store
	flags *cmpFact
	mem   Memory
	noRel bool // Dyninst's view: compares of two registers bound nothing
}

type vmemKey struct {
	addr vlin
	size int
}

func newValues(mem Memory) *values {
	return &values{
		regs: map[x86asm.Reg]regVal{}, proj: map[[2]int]int{}, fresh: map[regVal]int{},
		rel: map[[2]int]ival{}, relNe: map[[2]int][]int64{}, loads: map[vmemKey]regVal{},
		mem: mem,
	}
}

func (s *values) newRoot(r ival) int {
	s.roots = append(s.roots, root{r: r, index: -1})
	return len(s.roots) - 1
}

func (s *values) rootLin(id int) vlin { return vlin{t: [2]term{{root: id, c: 1}}, n: 1} }

// unknown is a value of its own of width w.
func (s *values) unknown(w uint8) regVal {
	return regVal{s.rootLin(s.newRoot(widthRange(w))), 64}
}

// widthRange is the range of an unsigned w-bit value (64: unbounded).
func widthRange(w uint8) ival {
	if w >= 64 {
		return full
	}
	return ival{0, int64(1)<<w - 1}
}

// rng is the range of v.
func (s *values) rng(v vlin) ival {
	r := ival{v.k, v.k}
	for i := 0; i < v.n; i++ {
		t := v.t[i]
		rr := s.roots[t.root].r
		a, b := satMul(rr.lo, t.c), satMul(rr.hi, t.c)
		r.lo, r.hi = satAdd(r.lo, min(a, b)), satAdd(r.hi, max(a, b))
	}
	if key, sign, ok := relKey(v); ok {
		if d, ok := s.rel[key]; ok {
			if sign < 0 {
				d = ival{-d.hi, -d.lo}
			}
			r = r.meet(ival{satAdd(d.lo, v.k), satAdd(d.hi, v.k)})
		}
	}
	return r
}

// relKey is the relation a two-root value is bound by: r_a - r_b (sign 1)
// or r_b - r_a (sign -1), with a < b.
func relKey(v vlin) ([2]int, int, bool) {
	if v.n != 2 || v.t[0].c+v.t[1].c != 0 || abs(v.t[0].c) != 1 {
		return [2]int{}, 0, false
	}
	a, b := v.t[0], v.t[1]
	if a.root > b.root {
		a, b = b, a
	}
	return [2]int{a.root, b.root}, int(a.c), true
}

func (s *values) add(a, b vlin, sign int64) (vlin, bool) {
	out := a
	out.k = satAdd(a.k, satMul(b.k, sign))
	for i := 0; i < b.n; i++ {
		t := b.t[i]
		t.c *= sign
		found := false
		for j := 0; j < out.n; j++ {
			if out.t[j].root == t.root {
				out.t[j].c += t.c
				found = true
			}
		}
		if !found {
			if out.n == 2 {
				return vlin{}, false
			}
			out.t[out.n] = t
			out.n++
		}
	}
	// Drop cancelled terms.
	n := 0
	for j := 0; j < out.n; j++ {
		if out.t[j].c != 0 {
			out.t[n] = out.t[j]
			n++
		}
	}
	for j := n; j < 2; j++ {
		out.t[j] = term{}
	}
	out.n = n
	return out, true
}

func (s *values) scale(a vlin, c int64) (vlin, bool) {
	out := a
	out.k = satMul(a.k, c)
	for i := 0; i < a.n; i++ {
		out.t[i].c = a.t[i].c * c
		if abs(out.t[i].c) > 1<<32 {
			return vlin{}, false
		}
	}
	return out, true
}

// project is the root of root id's low w bits.
func (s *values) project(id int, w uint8) int {
	if s.roots[id].r.within(widthRange(w)) {
		return id
	}
	key := [2]int{id, int(w)}
	if p, ok := s.proj[key]; ok {
		return p
	}
	p := s.newRoot(widthRange(w))
	s.proj[key] = p
	return p
}

// zext is the value of rv as an unsigned number: in [0, 2^w).
func (s *values) zext(rv regVal) vlin {
	if rv.w >= 64 {
		return rv.v
	}
	size := int64(1) << rv.w
	norm := func(v vlin) (vlin, bool) {
		r := s.rng(v)
		if r.empty() || r.lo <= -inf || r.hi >= inf {
			return vlin{}, false
		}
		m := floorDiv(r.lo, size)
		if r.hi >= (m+1)*size {
			return vlin{}, false
		}
		v.k -= m * size
		return v, true
	}
	if v, ok := norm(rv.v); ok {
		return v
	}
	if rv.v.n == 1 && rv.v.t[0].c == 1 {
		v := rv.v
		v.t[0].root = s.project(v.t[0].root, rv.w)
		if v, ok := norm(v); ok {
			return v
		}
	}
	id, ok := s.fresh[rv]
	if !ok {
		id = s.newRoot(widthRange(rv.w))
		s.fresh[rv] = id
	}
	return s.rootLin(id)
}

// sext is the value of rv as a signed number: in [-2^(w-1), 2^(w-1)).
func (s *values) sext(rv regVal) vlin {
	if rv.w >= 64 {
		return rv.v
	}
	half := int64(1) << (rv.w - 1)
	u := rv
	u.v.k = satAdd(u.v.k, half)
	v := s.zext(u)
	v.k = satAdd(v.k, -half)
	return v
}

// regWidth is the width of a general register and its family; high is
// true for ah, ch, dh, bh; ok false for other registers.
func regWidth(r x86asm.Reg) (fam x86asm.Reg, w uint8, high, ok bool) {
	switch {
	case r >= x86asm.RAX && r <= x86asm.R15:
		w = 64
	case r >= x86asm.EAX && r <= x86asm.R15L:
		w = 32
	case r >= x86asm.AX && r <= x86asm.R15W:
		w = 16
	case r >= x86asm.AH && r <= x86asm.BH:
		w, high = 8, true
	case r >= x86asm.AL && r <= x86asm.BL, r >= x86asm.SPB && r <= x86asm.R15B:
		w = 8
	default:
		return 0, 0, false, false
	}
	return regFamily(r), w, high, true
}

// read is register r's content at its width.
func (s *values) read(r x86asm.Reg) regVal {
	fam, w, high, ok := regWidth(r)
	if !ok || high {
		return regVal{s.rootLin(s.newRoot(widthRange(8))), 8}
	}
	rv, ok := s.regs[fam]
	if !ok {
		rv = regVal{s.rootLin(s.newRoot(full)), 64}
		s.regs[fam] = rv
	}
	if w < rv.w {
		return regVal{rv.v, w}
	}
	if w > rv.w {
		return regVal{s.zext(rv), w}
	}
	return rv
}

// write sets register r to v (a value modulo 2^w of at least r's width).
func (s *values) write(r x86asm.Reg, v regVal) {
	fam, w, _, ok := regWidth(r)
	if !ok {
		return
	}
	switch {
	case w == 64:
		s.regs[fam] = regVal{v.v, 64}
	case w == 32:
		s.regs[fam] = regVal{v.v, 32}
	default: // a write to part of the register
		s.regs[fam] = s.unknown(64)
	}
}

func (s *values) clobber(rs ...x86asm.Reg) {
	for _, r := range rs {
		s.regs[r] = s.unknown(64)
	}
}

// operand is the value of a (a register or an immediate) at width w.
func (s *values) operand(a x86asm.Arg, w uint8) (regVal, bool) {
	switch a := a.(type) {
	case x86asm.Reg:
		rv := s.read(a)
		if rv.w < w {
			return regVal{}, false
		}
		return regVal{rv.v, w}, true
	case x86asm.Imm:
		return regVal{constLin(int64(a)), w}, true
	}
	return regVal{}, false
}

// address is the value of memory operand m's address (next: the address
// of the next instruction, for %rip).
func (s *values) address(m x86asm.Mem, next uint64) (vlin, bool) {
	if m.Segment != 0 {
		return vlin{}, false
	}
	// x86asm gives a 32-bit displacement zero-extended; the processor
	// sign-extends it.
	disp := m.Disp
	if m.Base != 0 || m.Index != 0 {
		disp = int64(int32(disp))
	}
	v := constLin(disp)
	if m.Base == x86asm.RIP {
		v = constLin(int64(next) + disp)
	} else if m.Base != 0 {
		fam, w, _, ok := regWidth(m.Base)
		if !ok || w != 64 {
			return vlin{}, false
		}
		b := s.zext(s.read(fam))
		if v, ok = s.add(v, b, 1); !ok {
			return vlin{}, false
		}
	}
	if m.Index != 0 {
		fam, w, _, ok := regWidth(m.Index)
		if !ok || w != 64 {
			return vlin{}, false
		}
		x, ok := s.scale(s.zext(s.read(fam)), int64(m.Scale))
		if !ok {
			return vlin{}, false
		}
		if v, ok = s.add(v, x, 1); !ok {
			return vlin{}, false
		}
	}
	return v, true
}

// indices are the values idx takes, ascending, when few enough to read
// a table at each: those a table load gave its root, else every value of
// its range.
func (s *values) indices(idx vlin) ([]int64, bool) {
	var out []int64
	if idx.n == 1 && idx.t[0].c == 1 && s.roots[idx.t[0].root].vals != nil {
		rt := s.roots[idx.t[0].root]
		for _, x := range rt.vals {
			if x >= rt.r.lo && x <= rt.r.hi && !slices.Contains(rt.ne, x) {
				out = append(out, x+idx.k)
			}
		}
		slices.Sort(out)
		return slices.Compact(out), true
	}
	r := s.rng(idx)
	if r.empty() || r.lo <= -inf || r.hi >= inf || r.hi-r.lo >= maxTable {
		return nil, false
	}
	var ne []int64
	if idx.n == 1 && abs(idx.t[0].c) == 1 {
		for _, x := range s.roots[idx.t[0].root].ne {
			ne = append(ne, x*idx.t[0].c+idx.k)
		}
	}
	for x := r.lo; x <= r.hi; x++ {
		if !slices.Contains(ne, x) {
			out = append(out, x)
		}
	}
	return out, true
}

// split writes address a as k + c*idx, c the common factor of its
// coefficients (the table's stride).
func split(a vlin) (k, c int64, idx vlin) {
	for i := 0; i < a.n; i++ {
		c = gcd(c, abs(a.t[i].c))
	}
	idx = a
	idx.k = 0
	for i := 0; i < a.n; i++ {
		idx.t[i].c /= c
	}
	return a.k, c, idx
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// load is the value of size bytes at m, sign- or zero-extended: read from
// the image where the address is a table's plus a bounded index, else a
// root of its own (the same for a second load of the same address with
// no store between).
func (s *values) load(m x86asm.Mem, next uint64, size int, signed bool) regVal {
	w := uint8(8 * size)
	addr, ok := s.address(m, next)
	if !ok || size < 1 || size > 8 {
		return s.extend(regVal{s.rootLin(s.newRoot(widthRange(w))), min(w, 64)}, signed)
	}
	if k, c, ix := split(addr); addr.n > 0 && c <= 8 {
		if idx, ok := s.indices(ix); ok {
			vals := make([]int64, 0, len(idx))
			r := ival{inf, -inf}
			for _, x := range idx {
				a := satAdd(k, satMul(x, c))
				var b []byte
				if a >= 0 && a < inf {
					b = s.mem.ReadData(uint64(a), size)
				}
				if len(b) != size {
					vals = nil
					break
				}
				var u uint64
				for i := size - 1; i >= 0; i-- {
					u = u<<8 | uint64(b[i])
				}
				v := int64(u)
				if signed && size < 8 {
					v = int64(u<<(64-w)) >> (64 - w)
				}
				if !signed && size == 8 && v < 0 {
					v = inf // an unsigned value past 2^63: out of any range we use
				}
				v = clamp(v)
				vals = append(vals, v)
				r = ival{min(r.lo, v), max(r.hi, v)}
			}
			if vals != nil {
				id := s.newRoot(r)
				rt := &s.roots[id]
				rt.vals, rt.table, rt.index = vals, true, -1
				if ix.n == 1 {
					rt.index = ix.t[0].root
				}
				for i, a := range []x86asm.Reg{m.Base, m.Index} {
					if a != 0 && a != x86asm.RIP {
						rt.addrRegs[i] = regFamily(a)
					}
				}
				return regVal{s.rootLin(id), 64}
			}
		}
	}
	key := vmemKey{addr, size}
	if rv, ok := s.loads[key]; ok {
		return s.extend(rv, signed)
	}
	rv := regVal{s.rootLin(s.newRoot(widthRange(w))), min(w, 64)}
	s.loads[key] = rv
	return s.extend(rv, signed)
}

// extend is rv (a w-bit value) sign- or zero-extended to 64 bits.
func (s *values) extend(rv regVal, signed bool) regVal {
	if signed {
		return regVal{s.sext(rv), 64}
	}
	return regVal{s.zext(rv), 64}
}

// constrain narrows the roots of v by v in r (as numbers: no wrapping).
func (s *values) constrain(v vlin, r ival) {
	switch v.n {
	case 1:
		t := v.t[0]
		lo, hi := satAdd(r.lo, -v.k), satAdd(r.hi, -v.k) // c*root in [lo, hi]
		var b ival
		if t.c > 0 {
			b = ival{ceilDivSat(lo, t.c), floorDivSat(hi, t.c)}
		} else {
			b = ival{ceilDivSat(hi, t.c), floorDivSat(lo, t.c)}
		}
		s.narrow(t.root, b)
	case 2:
		key, sign, ok := relKey(v)
		if !ok || s.noRel {
			return
		}
		d := ival{satAdd(r.lo, -v.k), satAdd(r.hi, -v.k)}
		if sign < 0 {
			d = ival{-d.hi, -d.lo}
		}
		old, ok := s.rel[key]
		if !ok {
			old = full
		}
		d = old.meet(d)
		for changed := true; changed && !d.empty(); {
			changed = false
			for _, x := range s.relNe[key] {
				if x == d.lo {
					d.lo++
					changed = true
				}
				if x == d.hi {
					d.hi--
					changed = true
				}
			}
		}
		s.rel[key] = d
	}
}

func ceilDivSat(a, c int64) int64 {
	if a <= -inf || a >= inf {
		return clamp(a * sign(c))
	}
	return ceilDiv(a, c)
}

func floorDivSat(a, c int64) int64 {
	if a <= -inf || a >= inf {
		return clamp(a * sign(c))
	}
	return floorDiv(a, c)
}

func sign(c int64) int64 {
	if c < 0 {
		return -1
	}
	return 1
}

func (s *values) narrow(id int, b ival) {
	rt := &s.roots[id]
	r := rt.r.meet(b)
	if r.empty() {
		return // a path no execution takes: learn nothing
	}
	for changed := true; changed && !r.empty(); {
		changed = false
		for _, x := range rt.ne {
			if x == r.lo {
				r.lo++
				changed = true
			}
			if x == r.hi {
				r.hi--
				changed = true
			}
		}
	}
	if !r.empty() {
		rt.r = r
	}
}

// exclude records v != x.
func (s *values) exclude(v vlin, x int64) {
	switch v.n {
	case 1:
		if t := v.t[0]; abs(t.c) == 1 {
			y := (x - v.k) * t.c
			s.roots[t.root].ne = append(s.roots[t.root].ne, y)
			s.narrow(t.root, full)
		}
	case 2:
		if key, sgn, ok := relKey(v); ok && !s.noRel {
			y := (x - v.k) * int64(sgn)
			s.relNe[key] = append(s.relNe[key], y)
			s.constrain(v, full)
		}
	}
}

// constrainMod narrows the roots of rv by (rv + shift) mod 2^w in [lo, hi]
// (0 <= lo, hi < 2^w).
func (s *values) constrainMod(rv regVal, shift, lo, hi int64) {
	w := rv.w
	if w >= 64 {
		if hi < inf && lo > -inf {
			s.constrain(rv.v, ival{lo - shift, hi - shift})
		}
		return
	}
	size := int64(1) << w
	v := rv.v
	v.k = satAdd(v.k, shift)
	// Where v cannot wrap, the bound is on v itself.
	if r := s.rng(v); r.within(ival{0, size - 1}) {
		s.constrain(v, ival{lo, hi})
		return
	}
	if v.n != 1 || v.t[0].c != 1 {
		return
	}
	id := s.project(v.t[0].root, w)
	rr := s.roots[id].r
	base := v.k
	mlo, mhi := floorDiv(satAdd(rr.lo, base)-hi, size), floorDiv(satAdd(rr.hi, base)-lo, size)
	if mhi-mlo > 3 {
		return
	}
	hull := ival{inf, -inf}
	for m := mlo; m <= mhi; m++ {
		p := ival{lo + m*size - base, hi + m*size - base}.meet(rr)
		if !p.empty() {
			hull = ival{min(hull.lo, p.lo), max(hull.hi, p.hi)}
		}
	}
	if !hull.empty() {
		s.narrow(id, hull)
	}
}

// branch applies what the path says of the last compare at conditional
// jump op: the jump was taken or not.
func (s *values) branch(op x86asm.Op, taken bool) {
	f := s.flags
	if f == nil {
		return
	}
	if !taken {
		neg, ok := negated[op]
		if !ok {
			return
		}
		op = neg
	}
	w := f.a.w
	umax := widthRange(w).hi
	half := inf
	if w < 64 {
		half = int64(1) << (w - 1)
	}
	if f.b.v.n == 0 { // compared with a constant
		n, ns := f.b.v.k, f.b.v.k
		if w < 64 {
			n = int64(uint64(n) & uint64(umax))
			ns = int64(uint64(n)<<(64-w)) >> (64 - w)
		} else if n < 0 && op != x86asm.JE && op != x86asm.JNE && op != x86asm.JG &&
			op != x86asm.JGE && op != x86asm.JL && op != x86asm.JLE {
			return // an unsigned bound past 2^63
		}
		signedShift := int64(0)
		if w < 64 {
			signedShift = half
		}
		switch op {
		case x86asm.JA:
			s.constrainMod(f.a, 0, n+1, umax)
		case x86asm.JAE:
			s.constrainMod(f.a, 0, n, umax)
		case x86asm.JB:
			s.constrainMod(f.a, 0, 0, n-1)
		case x86asm.JBE:
			s.constrainMod(f.a, 0, 0, n)
		case x86asm.JE:
			s.constrainMod(f.a, 0, n, n)
		case x86asm.JNE:
			if r := s.rng(f.a.v); r.within(widthRange(w)) {
				s.exclude(f.a.v, n)
			}
		case x86asm.JG:
			s.constrainMod(f.a, signedShift, ns+1+signedShift, half-1+signedShift)
		case x86asm.JGE:
			s.constrainMod(f.a, signedShift, ns+signedShift, half-1+signedShift)
		case x86asm.JL:
			s.constrainMod(f.a, signedShift, -half+signedShift, ns-1+signedShift)
		case x86asm.JLE:
			s.constrainMod(f.a, signedShift, -half+signedShift, ns+signedShift)
		}
		return
	}
	// Two registers: compare their values as numbers.
	var a, b vlin
	switch op {
	case x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE:
		a, b = s.sext(f.a), s.sext(f.b)
	default:
		a, b = s.zext(f.a), s.zext(f.b)
	}
	d, ok := s.add(a, b, -1)
	if !ok {
		return
	}
	switch op {
	case x86asm.JA, x86asm.JG:
		s.constrain(d, ival{1, inf})
	case x86asm.JAE, x86asm.JGE:
		s.constrain(d, ival{0, inf})
	case x86asm.JB, x86asm.JL:
		s.constrain(d, ival{-inf, -1})
	case x86asm.JBE, x86asm.JLE:
		s.constrain(d, ival{-inf, 0})
	case x86asm.JE:
		s.constrain(d, ival{0, 0})
	case x86asm.JNE:
		s.exclude(d, 0)
	}
}

var negated = map[x86asm.Op]x86asm.Op{
	x86asm.JA: x86asm.JBE, x86asm.JBE: x86asm.JA, x86asm.JAE: x86asm.JB, x86asm.JB: x86asm.JAE,
	x86asm.JG: x86asm.JLE, x86asm.JLE: x86asm.JG, x86asm.JGE: x86asm.JL, x86asm.JL: x86asm.JGE,
	x86asm.JE: x86asm.JNE, x86asm.JNE: x86asm.JE,
}

// walk applies the path's instructions xs (path: where they are; end:
// the address the last one leads to) in turn, and what each conditional
// jump says by the way the path leaves it.
func (s *values) walk(path []Inst, xs []x86asm.Inst, end uint64) {
	for i, x := range xs {
		if isJcc(x.Op) {
			next := end
			if i+1 < len(path) {
				next = path[i+1].Addr
			}
			if path[i].Target != path[i].End() { // else both ways lead on
				s.branch(x.Op, next != path[i].End())
			}
		}
		s.step(x, path[i].End())
	}
}

// dyninstTwoLevel reports whether Dyninst 12.3 resolves a table (second)
// indexed by what another (first) holds, the instructions xs leading to
// the jump jx. It does not where the second load's base register is one
// the first load's address was computed from, unless the code label the
// entry is added to ends up in that register too. So in glibc 2.36's
// printf family, of the dispatches
//
//	movzbl (%rdi,%rax,1),%eax; lea -0x..(%rip),%rsi; movslq (%rcx,%rax,4),%rax; add %rsi,%rax
//	movzbl (%rsi,%rax,1),%eax; lea T(%rip),%rsi; movslq (%rsi,%rax,4),%rax; lea -0x..(%rip),%rsi; add %rsi,%rax
//	movzbl (%rdi,%rax,1),%edx; lea T(%rip),%rax; movslq (%rax,%rdx,4),%rax; add %rcx,%rax
//	movzbl (%rsi,%rax,1),%eax; lea T(%rip),%rsi; movslq (%rsi,%rax,4),%rax; add %rdi,%rax
//
// hpcstruct's loops show the first two resolved and the last two not
// (these shapes are the 33 dispatches of __vfprintf_internal,
// __vfwprintf_internal and printf_positional: 15 resolved, 18 not).
func dyninstTwoLevel(xs []x86asm.Inst, jx x86asm.Inst, first, second root) bool {
	b := second.addrRegs[0]
	if b == 0 || b != first.addrRegs[0] && b != first.addrRegs[1] {
		return true
	}
	r, ok := jx.Args[0].(x86asm.Reg)
	if !ok {
		return false
	}
	jr := regFamily(r)
	for i := len(xs) - 1; i >= 0; i-- {
		x := xs[i]
		d, ok := x.Args[0].(x86asm.Reg)
		if !ok || regFamily(d) != jr || !writesDest(x.Op) {
			continue
		}
		switch a := x.Args[1].(type) {
		case x86asm.Reg:
			return x.Op == x86asm.ADD && regFamily(a) == b
		case x86asm.Mem:
			return x.Op == x86asm.LEA && (regFamily(a.Base) == b && regFamily(a.Index) == jr ||
				regFamily(a.Index) == b && regFamily(a.Base) == jr)
		}
		return false
	}
	return false
}

// dyninstJunk reports whether Dyninst 12.3 takes the code at a table
// entry's target for junk and stops reading the table there (its
// IndirectControlFlowAnalyzer::FindJunkInstruction on x86-64): decoded on
// from the target up to the first control transfer, an instruction does
// not decode (dyninst12Undecodable included) or is 00 00 (add %al,(%rax)).
// Past the 16 entries of __strcasecmp_l_sse2's table are
// __strcat_sse2_unaligned's, whose targets 0xa7810 and 0xa7820 decode to
// a jump and 0xa7830 to `and %cl,-0x7d(%rax); c7 20`: Dyninst reads 18
// entries. Past __strncasecmp_l_sse2's the first is 0xac9c0, `pop %rax;
// 0e`: 16.
func dyninstJunk(mem Memory, target uint64) bool {
	var a amd64
	for pc, n := target, 0; n < maxJunkScan; n++ {
		b := mem.Bytes(pc, pc+uint64(a.MaxLen()))
		if len(b) == 0 {
			return true
		}
		in := a.Decode(b, pc)
		if in.Kind == Invalid || in.Len <= 0 || in.Len > len(b) || a.dyninst12Undecodable(b[:in.Len]) {
			return true
		}
		if in.Len == 2 && b[0] == 0 && b[1] == 0 {
			return true
		}
		if in.Kind != Other {
			return false
		}
		pc += uint64(in.Len)
	}
	return false
}

// maxJunkScan bounds dyninstJunk's walk (Dyninst's runs to the end of the
// region; code reaches a control transfer long before).
const maxJunkScan = 4096

// valueTable resolves indirect jump jmp by the value analysis: the path's
// instructions (oldest first; jmp itself may be last) are applied in turn,
// and the jump's target must come out as a table entry plus a constant.
// bloop keeps the entries the procedure may jump to that start an
// instruction, and stops at the first inside the procedure that does not
// (the index bound is loose and the table ended); an entry out of the
// procedure is a tail call, no edge. In Dyninst's view (to.Dyninst) every
// entry in code is kept, other procedures' included (to.Code), and a
// table indexed by another is resolved only as dyninstTwoLevel says.
func valueTable(mem Memory, path []Inst, jmp Inst, to Targets) []uint64 {
	if n := len(path); n > 0 && path[n-1].Addr == jmp.Addr {
		path = path[:n-1]
	}
	jx, _, ok := decodeAMD64(mem.Bytes(jmp.Addr, jmp.End()))
	if !ok || jx.Op != x86asm.JMP {
		return nil
	}
	xs := make([]x86asm.Inst, len(path))
	start := 0
	for i, p := range path {
		b := mem.Bytes(p.Addr, p.End())
		x, n, ok := decodeAMD64(b)
		if !ok || n != p.Len {
			start = i + 1
			continue
		}
		if isEndbr(b) {
			x.Op = x86asm.NOP
		}
		xs[i] = x
	}
	s := newValues(mem)
	s.noRel = to.Dyninst
	s.walk(path[start:], xs[start:], jmp.Addr)
	var t vlin
	switch a := jx.Args[0].(type) {
	case x86asm.Reg:
		fam, w, _, ok := regWidth(a)
		if !ok || w != 64 {
			return nil
		}
		t = s.zext(s.read(fam))
	case x86asm.Mem:
		if jx.MemBytes != 0 && jx.MemBytes != 8 {
			return nil
		}
		t = s.load(a, jmp.End(), 8, false).v
	default:
		return nil
	}
	var rt root
	switch {
	case t.n == 0:
		// A code label (glibc's printf: lea form_unknown(%rip),%rax; cmp;
		// ja; jmp *%rax): one target.
		rt = root{r: ival{0, 0}, vals: []int64{0}}
	case t.n == 1 && t.t[0].c == 1 && s.roots[t.t[0].root].table:
		rt = s.roots[t.t[0].root]
		if to.Dyninst && rt.index >= 0 && s.roots[rt.index].table && !dyninstTwoLevel(xs[start:], jx, s.roots[rt.index], rt) {
			return nil
		}
	default:
		return nil
	}
	var out []uint64
	for _, e := range rt.vals {
		if e < rt.r.lo || e > rt.r.hi {
			continue
		}
		a := satAdd(e, t.k)
		if a <= 0 || a >= inf {
			continue
		}
		target := uint64(a)
		switch {
		case to.Dyninst:
			if dyninstJunk(mem, target) {
				return out
			}
			if to.Valid(target) || to.Code != nil && to.Code(target) {
				out = append(out, target)
			}
		case !to.Valid(target):
			// Out of the procedure: a tail call, no edge.
		case !to.Start(target):
			return out
		default:
			out = append(out, target)
		}
	}
	return out
}
