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

// decoded is one instruction of a linear sweep.
type decoded struct {
	addr uint64
	op   frameOp
}

// inferStarts sweeps the parts of sec that no sized symbol covers and
// returns the procedure starts it infers there.
func inferStarts(img *loader.Image, sec *loader.Section, known map[uint64]bool) []uint64 {
	// Regions: the section minus the extents of sized symbols.
	var regions []loader.Range
	pos := sec.Addr
	for _, f := range img.Funcs {
		if f.Addr < sec.Addr || f.Addr >= sec.End() || !f.Sized {
			continue
		}
		if f.Addr > pos {
			regions = append(regions, loader.Range{Lo: pos, Hi: f.Addr})
		}
		if f.End > pos {
			pos = f.End
		}
	}
	if pos < sec.End() {
		regions = append(regions, loader.Range{Lo: pos, Hi: sec.End()})
	}
	var out []uint64
	for _, r := range regions {
		out = append(out, inferRegion(img, sec, r, known)...)
	}
	return out
}

// inferRegion applies the inference to one region of unsized code.
func inferRegion(img *loader.Image, sec *loader.Section, r loader.Range, known map[uint64]bool) []uint64 {
	var insts []decoded
	for a := r.Lo; a < r.Hi; {
		op := decodeAMD64(img.Bytes(a, min(a+15, sec.End())), a)
		insts = append(insts, decoded{a, op})
		next := a + uint64(op.len)
		// Resynchronize at symbols the sweep would step over.
		for k := a + 1; k < next && k < r.Hi; k++ {
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
	var prot, conds []loader.Range
	if j, _ := nextReal(0); j < len(insts) && !known[insts[j].addr] {
		cands = append(cands, insts[j].addr) // code right after a sized procedure
	}
	for i, in := range insts {
		op, end := in.op, in.addr+uint64(in.op.len)
		switch op.kind {
		case opCondJump:
			// A conditional jump stays inside its procedure, except for
			// conditional tail calls to known entries.
			if op.target != 0 && !known[op.target] && r.Lo <= op.target && op.target < r.Hi {
				if op.target > in.addr {
					conds = append(conds, loader.Range{Lo: in.addr, Hi: op.target + 1})
				} else {
					conds = append(conds, loader.Range{Lo: op.target, Hi: end})
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
					prot = append(prot, loader.Range{Lo: lo, Hi: hi})
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
		t := c.Lo
		if c.Hi-1 != c.Lo && isCand[c.Hi-1] {
			t = c.Hi - 1 // forward jump: the target is the last byte
		}
		if isCand[t] {
			k := sort.Search(len(strong), func(k int) bool { return strong[k] > c.Lo })
			if k < len(strong) && strong[k] < c.Hi-1 && strong[k] != t {
				continue
			}
		}
		prot = append(prot, c)
	}
	// An exception landing pad belongs to the procedure of its call sites.
	for _, cs := range img.CallSites {
		if cs.Pad != 0 && r.Lo <= cs.Pad && cs.Pad < r.Hi && r.Lo <= cs.Lo && cs.Lo < r.Hi {
			prot = append(prot, loader.Range{Lo: min(cs.Lo, cs.Pad), Hi: max(cs.Hi, cs.Pad+1)})
		}
	}
	prot = loader.MergeRanges(prot)
	// A backward jump into a protected interval extends it to the jump
	// (outlined cold paths that return into a loop).
	for changed := true; changed; {
		changed = false
		for _, in := range insts {
			if in.op.kind != opJump || in.op.target >= in.addr || in.op.target < r.Lo {
				continue
			}
			if k := find(prot, in.op.target); k >= 0 && prot[k].Hi < in.addr+uint64(in.op.len) {
				prot[k].Hi = in.addr + uint64(in.op.len)
				prot = loader.MergeRanges(prot)
				changed = true
			}
		}
	}
	prot = loader.MergeRanges(append(prot, frameIntervals(insts, cands, prot)...))
	var out []uint64
	for _, c := range cands {
		if !known[c] && find(prot, c) < 0 && c < r.Hi {
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
func frameIntervals(insts []decoded, cands []uint64, prot []loader.Range) []loader.Range {
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
	var out []loader.Range
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
			out = append(out, loader.Range{Lo: in.addr + 1, Hi: last})
		}
	}
	return out
}

// find returns the index of the interval holding a, or -1.
func find(rs []loader.Range, a uint64) int {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].Lo > a }) - 1
	if i >= 0 && a < rs[i].Hi {
		return i
	}
	return -1
}
