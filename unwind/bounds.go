package unwind

import (
	"sort"
	"strings"

	"bloop/loader"
)

// computeBounds finds the procedures of the image: every function symbol
// and PLT stub is a procedure start, and code not covered by a sized
// symbol (stripped libraries keep only their exported symbols) gets starts
// inferred as in the paper's section 2.1: after a return, an unconditional
// jump or a halt, and after a call when a padded, aligned or
// endbr64-marked entry follows, unless the address lies in a protected
// interval. Symbols are kept even inside protected intervals: loader only
// reports STT_FUNC symbols, which compilers and assemblers emit only for
// real entries.
func (m *Module) computeBounds() {
	img := m.Img
	type start struct {
		addr, end uint64 // end: a symbol's size bound, else 0
		name      string
		inferred  bool
	}
	var starts []start
	known := map[uint64]bool{}
	aliases := map[uint64][]string{}
	for _, f := range img.Funcs {
		known[f.Addr] = true
		aliases[f.Addr] = f.Aliases
		s := start{addr: f.Addr, name: f.Name}
		if f.Sized {
			s.end = f.End
		}
		starts = append(starts, s)
	}
	if img.Arch == loader.AMD64 {
		for _, sec := range img.Sections {
			for _, a := range inferStarts(img, sec, known) {
				starts = append(starts, start{addr: a, inferred: true})
			}
		}
	}
	sort.SliceStable(starts, func(i, j int) bool { return starts[i].addr < starts[j].addr })
	m.byName = map[string]int{}
	for i, s := range starts {
		if i > 0 && starts[i-1].addr == s.addr {
			continue
		}
		sec := img.SectionAt(s.addr)
		if sec == nil {
			continue
		}
		hi := sec.End()
		for j := i + 1; j < len(starts); j++ {
			if starts[j].addr > s.addr {
				if starts[j].addr < hi {
					hi = starts[j].addr
				}
				break
			}
		}
		if s.end > s.addr && s.end < hi {
			hi = s.end
		}
		for _, n := range aliases[s.addr] {
			if _, dup := m.byName[n]; !dup {
				m.byName[n] = len(m.procs)
			}
		}
		m.procs = append(m.procs, Proc{Lo: s.addr, Hi: hi, Name: s.name, Inferred: s.inferred})
	}
}

// rng is a half-open address interval.
type rng struct{ lo, hi uint64 }

// decoded is one instruction of a linear sweep.
type decoded struct {
	addr uint64
	op   frameOp
}

// inferStarts sweeps the parts of sec that no sized symbol covers and
// returns the procedure starts it infers there.
func inferStarts(img *loader.Image, sec *loader.Section, known map[uint64]bool) []uint64 {
	// Regions: the section minus the extents of sized symbols.
	var regions []rng
	pos := sec.Addr
	for _, f := range img.Funcs {
		if f.Addr < sec.Addr || f.Addr >= sec.End() || !f.Sized {
			continue
		}
		if f.Addr > pos {
			regions = append(regions, rng{pos, f.Addr})
		}
		if f.End > pos {
			pos = f.End
		}
	}
	if pos < sec.End() {
		regions = append(regions, rng{pos, sec.End()})
	}
	var out []uint64
	for _, r := range regions {
		out = append(out, inferRegion(img, sec, r, known)...)
	}
	return out
}

// inferRegion applies the inference to one region of unsized code.
func inferRegion(img *loader.Image, sec *loader.Section, r rng, known map[uint64]bool) []uint64 {
	var insts []decoded
	for a := r.lo; a < r.hi; {
		op := decodeAMD64(img.Bytes(a, min(a+15, sec.End())), a)
		insts = append(insts, decoded{a, op})
		next := a + uint64(op.len)
		// Resynchronize at symbols the sweep would step over.
		for k := a + 1; k < next && k < r.hi; k++ {
			if known[k] {
				next = k
				break
			}
		}
		a = next
	}
	nextReal := func(i int) (int, bool) { // skip padding; report whether there was any
		j := i
		for j < len(insts) && insts[j].op.pad {
			j++
		}
		return j, j > i
	}
	var cands []uint64
	var prot, conds []rng
	if j, _ := nextReal(0); j < len(insts) && !known[insts[j].addr] {
		cands = append(cands, insts[j].addr) // code right after a sized procedure
	}
	for i, in := range insts {
		op, end := in.op, in.addr+uint64(in.op.len)
		switch op.kind {
		case opCondJump:
			// A conditional jump stays inside its procedure, except for
			// conditional tail calls to known entries.
			if op.target != 0 && !known[op.target] && r.lo <= op.target && op.target < r.hi {
				if op.target > in.addr {
					conds = append(conds, rng{in.addr, op.target + 1})
				} else {
					conds = append(conds, rng{op.target, end})
				}
			}
		case opRet, opJump, opJumpInd, opHalt:
			if op.pad {
				continue
			}
			if op.kind == opJumpInd {
				// A jump table's targets belong to the jumping procedure.
				if ts := tableTargets(img, insts, i, r); len(ts) > 0 {
					lo, hi := in.addr, end
					for _, t := range ts {
						lo, hi = min(lo, t), max(hi, t+1)
					}
					prot = append(prot, rng{lo, hi})
					continue
				}
			}
			if j, _ := nextReal(i + 1); j < len(insts) {
				cands = append(cands, insts[j].addr)
			}
		case opCall:
			// A call that does not return may end a procedure: infer a start
			// when what follows is padded to alignment or marked by endbr64.
			if j, padded := nextReal(i + 1); j < len(insts) {
				a := insts[j].addr
				if insts[j].op.endbr || padded && a%16 == 0 || a%16 == 0 && looksLikeEntry(insts[j].op) || noReturn(img, op.target) {
					cands = append(cands, a)
				}
			}
		}
	}
	// Hot/cold splitting breaks "conditional jumps stay inside": gcc's hot
	// part branches to its .cold part across other procedures. A jump whose
	// target is itself a candidate start and whose span holds a clear entry
	// (padded to alignment, then a prologue) protects nothing.
	isCand := map[uint64]bool{}
	for _, c := range cands {
		isCand[c] = true
	}
	var strong []uint64
	for i, in := range insts {
		if isCand[in.addr] && in.addr%16 == 0 && looksLikeEntry(in.op) && (i == 0 || insts[i-1].op.pad) {
			strong = append(strong, in.addr)
		}
	}
	for _, c := range conds {
		t := c.lo
		if c.hi-1 != c.lo && isCand[c.hi-1] {
			t = c.hi - 1 // forward jump: the target is the last byte
		}
		if isCand[t] {
			k := sort.Search(len(strong), func(k int) bool { return strong[k] > c.lo })
			if k < len(strong) && strong[k] < c.hi-1 && strong[k] != t {
				continue
			}
		}
		prot = append(prot, c)
	}
	// An exception landing pad belongs to the procedure of its call sites.
	for _, cs := range img.CallSites {
		if cs.Pad != 0 && r.lo <= cs.Pad && cs.Pad < r.hi && r.lo <= cs.Lo && cs.Lo < r.hi {
			prot = append(prot, rng{min(cs.Lo, cs.Pad), max(cs.Hi, cs.Pad+1)})
		}
	}
	prot = merge(prot)
	// A backward jump into a protected interval extends it to the jump
	// (outlined cold paths that return into a loop).
	for changed := true; changed; {
		changed = false
		for _, in := range insts {
			if in.op.kind != opJump || in.op.target >= in.addr || in.op.target < r.lo {
				continue
			}
			if k := find(prot, in.op.target); k >= 0 && prot[k].hi < in.addr+uint64(in.op.len) {
				prot[k].hi = in.addr + uint64(in.op.len)
				prot = merge(prot)
				changed = true
			}
		}
	}
	prot = merge(append(prot, frameIntervals(insts, cands, prot)...))
	var out []uint64
	for _, c := range cands {
		if !known[c] && find(prot, c) < 0 && c < r.hi {
			out = append(out, c)
		}
	}
	return out
}

// noReturnNames are library procedures that never return; a call to one
// may be the last instruction of a procedure (stripped binaries keep the
// names of their PLT stubs).
var noReturnNames = map[string]bool{
	"exit": true, "_exit": true, "_Exit": true, "abort": true, "__stack_chk_fail": true,
	"__assert_fail": true, "__cxa_throw": true, "__cxa_rethrow": true, "_Unwind_Resume": true,
	"__cxa_bad_cast": true, "_ZSt9terminatev": true, "longjmp": true, "siglongjmp": true,
	"pthread_exit": true, "__fortify_fail": true, "__chk_fail": true, "err": true, "errx": true,
	"_gfortran_stop_string": true, "_gfortran_runtime_error_at": true, "_gfortran_os_error_at": true,
}

func noReturn(img *loader.Image, target uint64) bool {
	f := img.FuncAt(target)
	if f == nil || f.Addr != target {
		return false
	}
	name, _, _ := strings.Cut(f.Name, "@")
	return noReturnNames[name] || strings.HasPrefix(name, "_ZSt19__throw_") || strings.HasPrefix(name, "_ZSt20__throw_") || strings.HasPrefix(name, "_ZSt24__throw_")
}

// looksLikeEntry reports whether an instruction is a typical first
// instruction of a procedure.
func looksLikeEntry(op frameOp) bool {
	return op.endbr || op.kind == opPushBP || op.pushCS || op.subSP
}

// frameIntervals protects the code between a stack allocation (sub rsp,n)
// and the last matching deallocation, and between setting up a frame
// pointer (mov rbp,rsp) and the last restore of BP, each searched up to the
// next unprotected candidate start that looks like a procedure entry.
func frameIntervals(insts []decoded, cands []uint64, prot []rng) []rng {
	var strong []uint64
	idx := map[uint64]int{}
	for i, in := range insts {
		idx[in.addr] = i
	}
	for _, c := range cands {
		if i, ok := idx[c]; ok && find(prot, c) < 0 && looksLikeEntry(insts[i].op) {
			strong = append(strong, c)
		}
	}
	var out []rng
	for i, in := range insts {
		op := in.op
		var match func(frameOp) bool
		switch {
		case op.subSP:
			n := op.imm
			match = func(o frameOp) bool { return o.addSP && o.imm == -n }
		case op.kind == opBPFromSP:
			match = func(o frameOp) bool { return o.kind == opLeave || o.kind == opPopBP || o.kind == opLoadBP }
		case op.kind == opStoreBP:
			match = func(o frameOp) bool { return o.kind == opLoadBP || o.kind == opPopBP }
		default:
			continue
		}
		k := sort.Search(len(strong), func(k int) bool { return strong[k] > in.addr })
		limit := ^uint64(0)
		if k < len(strong) {
			limit = strong[k]
		}
		var last uint64
		for j := i + 1; j < len(insts) && insts[j].addr < limit; j++ {
			if match(insts[j].op) {
				last = insts[j].addr + uint64(insts[j].op.len)
			}
		}
		if last > 0 {
			// The allocating instruction may itself be a procedure's first.
			out = append(out, rng{in.addr + 1, last})
		}
	}
	return out
}

// merge sorts and joins overlapping intervals.
func merge(rs []rng) []rng {
	sort.Slice(rs, func(i, j int) bool { return rs[i].lo < rs[j].lo })
	var out []rng
	for _, r := range rs {
		if n := len(out); n > 0 && r.lo <= out[n-1].hi {
			out[n-1].hi = max(out[n-1].hi, r.hi)
			continue
		}
		out = append(out, r)
	}
	return out
}

// find returns the index of the interval holding a, or -1.
func find(rs []rng, a uint64) int {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].lo > a }) - 1
	if i >= 0 && a < rs[i].hi {
		return i
	}
	return -1
}
