package procs

import (
	"slices"
	"sort"

	"bloop/isa"
	"bloop/loader"
	"bloop/structure"
)

// infer sweeps the code no symbol covers: the targets of its direct calls
// become starts, and in the parts no FDE covers either, starts are
// inferred by the paper's rules (inferRegion) on a second sweep, which
// resynchronizes at the call targets too.
func (f *finder) infer() {
	regions := f.fill(f.uncovered())
	for _, r := range regions {
		f.callTargets(r)
	}
	var gaps []uint64
	for _, g := range subtract(regions, f.frames) {
		gaps = append(gaps, inferRegion(f.img, f.arch, f.sweep(g), g, f.known)...)
	}
	for _, a := range gaps {
		f.add(a, Gap)
	}
}

// fill drops the regions that are only fill bytes (x86-64's int3 and
// nop, isa.FrameABI.Fill): most of the code between a kernel's symbols is
// (vmlinux: 4.5 MB in thousands of gaps), and decoding it one byte at a
// time, twice, took seconds. They hold no call and no start (inferRegion
// ignores all-padding sweeps, which is how the fixed-width sets' padding
// words go).
func (f *finder) fill(rs []structure.Range) []structure.Range {
	fill := f.framer.ABI().Fill
	if len(fill) == 0 {
		return rs
	}
	out := rs[:0]
	for _, r := range rs {
		if !onlyFill(f.img.Bytes(r.Lo, r.Hi), fill) {
			out = append(out, r)
		}
	}
	return out
}

func onlyFill(b, fill []byte) bool {
	for _, c := range b {
		if !slices.Contains(fill, c) {
			return false
		}
	}
	return len(b) > 0
}

// known reports whether a is a start from any source. The sweep asks it
// of every byte it steps over: in the code, a bit answers.
func (f *finder) known(a uint64) bool {
	if in, set := f.marks.has(a); in {
		return set
	}
	_, ok := f.src[a]
	return ok
}

// setSrc records a start.
func (f *finder) setSrc(a uint64, s Source) {
	f.src[a] = s
	f.marks.add(a)
}

// startMarks is a bit per byte of the span of an image's code sections.
type startMarks struct {
	lo   uint64
	bits []uint64
}

func newStartMarks(img *loader.Image) startMarks {
	lo, hi := ^uint64(0), uint64(0)
	for _, sec := range img.Sections {
		if sec.End() > sec.Addr {
			lo, hi = min(lo, sec.Addr), max(hi, sec.End())
		}
	}
	if hi <= lo || hi-lo > 1<<28 { // no code, or too far apart for a bitmap (32 MB): the map answers
		return startMarks{}
	}
	return startMarks{lo: lo, bits: make([]uint64, (hi-lo+63)/64)}
}

// has reports whether a lies in the span (in) and then whether it is marked.
func (m *startMarks) has(a uint64) (in, set bool) {
	o := a - m.lo
	if o/64 >= uint64(len(m.bits)) {
		return false, false
	}
	return true, m.bits[o/64]&(1<<(o%64)) != 0
}

func (m *startMarks) add(a uint64) {
	if o := a - m.lo; o/64 < uint64(len(m.bits)) {
		m.bits[o/64] |= 1 << (o % 64)
	}
}

// uncovered returns the code outside the symbols' extents, per section.
func (f *finder) uncovered() []structure.Range {
	var code []structure.Range
	for _, sec := range f.img.Sections {
		code = append(code, structure.Range{Lo: sec.Addr, Hi: sec.End()})
	}
	return subtract(code, f.covered)
}

func allPadding(insts []isa.SweepInst) bool {
	for _, in := range insts {
		if !in.Op.Pad {
			return false
		}
	}
	return true
}

// subtract returns the parts of the sorted, disjoint ranges rs outside
// the sorted, disjoint ranges cut.
func subtract(rs, cut []structure.Range) []structure.Range {
	var out []structure.Range
	for _, r := range rs {
		lo := r.Lo
		k := sort.Search(len(cut), func(k int) bool { return cut[k].Hi > lo })
		for ; k < len(cut) && cut[k].Lo < r.Hi; k++ {
			if cut[k].Lo > lo {
				out = append(out, structure.Range{Lo: lo, Hi: cut[k].Lo})
			}
			lo = max(lo, cut[k].Hi)
		}
		if lo < r.Hi {
			out = append(out, structure.Range{Lo: lo, Hi: r.Hi})
		}
	}
	return out
}

// inferRegion applies the paper's rules to the instructions insts of
// region r, code that no symbol or FDE covers, and returns the starts it
// infers: after a return, an unconditional jump or a halt, and after a
// call when a padded, aligned or endbr64-marked entry follows, unless the
// address lies in a protected interval (jump tables, conditional jumps,
// landing pads, stack frames). Starts from the other sources are kept
// even inside protected intervals: they come from the file, not from
// guessing.
func inferRegion(img *loader.Image, ar isa.Arch, insts []isa.SweepInst, r structure.Range, known func(uint64) bool) []uint64 {
	if allPadding(insts) {
		return nil // most regions between symbols are alignment only
	}
	nextReal := func(i int) (int, bool) { // skip padding; report whether there was any
		j := i
		for j < len(insts) && insts[j].Op.Pad {
			j++
		}
		return j, j > i
	}
	var cands []uint64
	var prot, conds, backs []structure.Range
	first := uint64(0) // code right after a sized procedure: someone's start
	// Unless a known start's padding leads to it: aarch64's _init and
	// _fini (.dynamic's DT_INIT, DT_FINI) begin with a nop.
	if j, _ := nextReal(0); j < len(insts) && !known(insts[j].Addr) && !known(insts[0].Addr) {
		first = insts[j].Addr
		cands = append(cands, first)
	}
	for i, in := range insts {
		op, end := in.Op, in.Addr+uint64(in.Op.Len)
		switch op.Flow {
		case isa.CondJump:
			// A conditional jump stays inside its procedure (from its 2nd
			// byte: a procedure may begin with one, aarch64's cbnz of a
			// tail-called is_odd), but for tail calls to known entries.
			if op.Target != 0 && !known(op.Target) && r.Lo <= op.Target && op.Target < r.Hi {
				if op.Target > in.Addr {
					conds = append(conds, structure.Range{Lo: in.Addr + 1, Hi: op.Target + 1})
				} else {
					conds = append(conds, structure.Range{Lo: op.Target, Hi: end})
				}
			}
		case isa.Return, isa.Jump, isa.IndirectJump, isa.Halt:
			if op.Pad {
				continue
			}
			if op.Flow == isa.Jump && r.Lo <= op.Target && op.Target < in.Addr && !known(op.Target) {
				backs = append(backs, structure.Range{Lo: op.Target, Hi: end})
			}
			if op.Flow == isa.IndirectJump {
				// A jump table's targets belong to the jumping procedure.
				if ts := isa.SweepTable(ar, img, insts, i, r.Lo, r.Hi); len(ts) > 0 {
					lo, hi := in.Addr, end
					for _, t := range ts {
						lo, hi = min(lo, t), max(hi, t+1)
					}
					prot = append(prot, structure.Range{Lo: lo, Hi: hi})
					continue
				}
			}
			// A jump over padding to the code after it ends nothing (on the
			// fixed-width sets: x86-64's inference stays as its figures in
			// docs/architectures.md were measured, 5 such starts in the corpus).
			overPad := op.Flow == isa.Jump && ar.Align() > 1
			if j, _ := nextReal(i + 1); j < len(insts) && !(overPad && op.Target == insts[j].Addr) {
				cands = append(cands, insts[j].Addr)
			}
		case isa.Call, isa.IndirectCall:
			// A call that does not return may end a procedure: infer a start
			// when what follows is padded to alignment or marked by endbr64.
			// The call's own slot after it (ppc64's TOC restore, a nop when
			// the callee shares the TOC) is neither padding nor a start.
			k := i + 1
			if k < len(insts) && isa.CallSlot(ar, insts[k].Op) {
				k++
			}
			if j, padded := nextReal(k); j < len(insts) {
				a := insts[j].Addr
				if insts[j].Op.Endbr || padded && a%16 == 0 || a%16 == 0 && looksLikeEntry(insts[j].Op) || noReturn(img, op.Target) {
					cands = append(cands, a)
				}
			}
		}
	}
	cands = dropNonEntries(insts, cands, first, known, padCallee(img))
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
		if isCand[in.Addr] && in.Addr%16 == 0 && looksLikeEntry(in.Op) && (i == 0 || insts[i-1].Op.Pad) {
			strong = append(strong, in.Addr)
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
	// A backward jump to a block that is no candidate start stays inside
	// its procedure (a block placed after the return that jumps back),
	// unless a clear entry lies between: a hot part jumping into the
	// middle of its .cold part, which gcc places before the hot parts.
	for _, b := range backs {
		k := sort.Search(len(strong), func(k int) bool { return strong[k] > b.Lo })
		if !isCand[b.Lo] && (k == len(strong) || strong[k] >= b.Hi) {
			prot = append(prot, b)
		}
	}
	// An exception landing pad belongs to the procedure of its call sites.
	for _, cs := range img.CallSites {
		if cs.Pad != 0 && r.Lo <= cs.Pad && cs.Pad < r.Hi && r.Lo <= cs.Lo && cs.Lo < r.Hi {
			prot = append(prot, structure.Range{Lo: min(cs.Lo, cs.Pad), Hi: max(cs.Hi, cs.Pad+1)})
		}
	}
	prot = structure.MergeRanges(prot)
	// A backward jump into a protected interval extends it to the jump
	// (outlined cold paths that return into a loop), unless a clear entry
	// lies between: then it is a hot part jumping back into its .cold part,
	// which gcc places before the hot parts.
	for changed := true; changed; {
		changed = false
		for _, in := range insts {
			if in.Op.Flow != isa.Jump || in.Op.Target >= in.Addr || in.Op.Target < r.Lo {
				continue
			}
			if k := sort.Search(len(strong), func(k int) bool { return strong[k] > in.Op.Target }); k < len(strong) && strong[k] <= in.Addr {
				continue
			}
			if k := find(prot, in.Op.Target); k >= 0 && prot[k].Hi < in.Addr+uint64(in.Op.Len) {
				prot[k].Hi = in.Addr + uint64(in.Op.Len)
				prot = structure.MergeRanges(prot)
				changed = true
			}
		}
	}
	prot = structure.MergeRanges(append(prot, frameIntervals(insts, cands, prot)...))
	var out []uint64
	for _, c := range cands {
		if !known(c) && find(prot, c) < 0 && c < r.Hi {
			out = append(out, c)
		}
	}
	return out
}

// dropNonEntries removes the candidates whose first instruction no
// procedure starts with. Landing pads and the blocks after a call that does
// not return follow a call or jump as entries do, but use values they did
// not compute (the exception in rax, the frame in rbp), release the frame (an epilogue reached by a jump), or only
// jump into the middle of other code (gcc's pads that lead to the .cold
// part). With -fcf-protection, pads begin with endbr64 as entries do.
// A .cold part starts the same way, but its hot part jumps back to it
// (gcc places cold parts first); it stays, as does first, the code right
// after a sized procedure, which belongs to no other. A landing pad's
// code calls __cxa_begin_catch or _Unwind_Resume a few blocks in (a catch
// handler first thing, a cleanup after its destructors): only the
// unwinder enters that code, so no path from a procedure's entry reaches
// such a call (padReach), which is how the pads of aarch64 and ppc64le
// code without .eh_frame are told.
func dropNonEntries(insts []isa.SweepInst, cands []uint64, first uint64, known func(uint64) bool, callee func(uint64) (pad, noret bool)) []uint64 {
	isCand := make(map[uint64]bool, len(cands))
	for _, c := range cands {
		isCand[c] = true
	}
	jumpedBack := map[uint64]bool{}
	for _, in := range insts {
		if k := in.Op.Flow; (k == isa.Jump || k == isa.CondJump) && in.Op.Target < in.Addr && isCand[in.Op.Target] {
			jumpedBack[in.Op.Target] = true
		}
	}
	out := cands[:0]
	for _, c := range cands {
		i, ok := instAt(insts, c)
		if !ok || c == first || jumpedBack[c] {
			out = append(out, c)
			continue
		}
		op := insts[i].Op
		if op.Endbr && i+1 < len(insts) {
			op = insts[i+1].Op
		}
		if padReach(insts, i, known, callee) {
			continue
		}
		epilogue := op.AddSP || op.Frame == isa.PopBP || op.Frame == isa.Leave || op.Frame == isa.SPAdd && op.Imm > 0
		midJump := op.Flow == isa.Jump && op.Target != 0 && !known(op.Target) && !isCand[op.Target]
		if !op.Inherits && !epilogue && !midJump {
			out = append(out, c)
		}
	}
	return out
}

// instAt is the index of the instruction at a in insts (sorted by
// address), searched rather than indexed in a map: a region can hold
// millions of instructions.
func instAt(insts []isa.SweepInst, a uint64) (int, bool) {
	i := sort.Search(len(insts), func(i int) bool { return insts[i].Addr >= a })
	return i, i < len(insts) && insts[i].Addr == a
}

// noReturn reports whether target is a procedure that never returns,
// known by its name (stripped binaries keep the names of PLT stubs).
func noReturn(img *loader.Image, target uint64) bool {
	f := img.FuncAt(target)
	return f != nil && f.Addr == target && NoReturn(f.Name)
}

// padReachLimit bounds padReach's walk, in instructions: a pad reaches
// its call within a few blocks (its destructor calls, the test of what
// was built), but gcc -O0's cleanup pads run through each other's code,
// one jump after each destructor call, to the one _Unwind_Resume at their
// end (ppc64le tmpl-gcc12-O0's main: about 60 instructions).
const padReachLimit = 128

// padReachSpan bounds the stretch padReach looks for the next known start
// in, in instructions: a region can hold millions.
const padReachSpan = 4096

// padReach reports whether the code from insts[i] (a candidate) reaches a
// call that only landing pads make (callee's pad) along fall-throughs and
// direct jumps, within padReachLimit instructions, without passing a call
// that does not return or leaving the candidate's stretch: nothing below
// it (a hot part's jump back into its .cold part is not its own code) and
// up to the next known start. Other candidates are passed: the -O0 pads
// it runs through are candidates too.
func padReach(insts []isa.SweepInst, i int, known func(uint64) bool, callee func(uint64) (pad, noret bool)) bool {
	end := i + 1
	for end < len(insts) && end-i < padReachSpan && !known(insts[end].Addr) {
		end++
	}
	seen := map[int]bool{}
	work := []int{i}
	for len(work) > 0 && len(seen) < padReachLimit {
		j := work[len(work)-1]
		work = work[:len(work)-1]
		if j < i || j >= end || seen[j] {
			continue
		}
		in := insts[j]
		seen[j] = true
		op := in.Op
		next := true
		switch op.Flow {
		case isa.Call:
			if op.Target != 0 {
				pad, noret := callee(op.Target)
				if pad {
					return true
				}
				next = !noret
			}
		case isa.Jump, isa.CondJump:
			if k, ok := instAt(insts, op.Target); ok && op.Target != 0 {
				work = append(work, k)
			}
			next = op.Flow == isa.CondJump
		case isa.IndirectJump, isa.Return, isa.Halt, isa.Invalid:
			next = false
		}
		if next {
			work = append(work, j+1)
		}
	}
	return false
}

// padCallee tells padReach what a call's target is: a procedure only
// landing pads call, or one that does not return.
func padCallee(img *loader.Image) func(uint64) (pad, noret bool) {
	return func(t uint64) (bool, bool) { return padCall(img, t), noReturn(img, t) }
}

// padCall reports whether target is a procedure only a landing pad calls:
// those that take the exception object a pad is handed.
func padCall(img *loader.Image, target uint64) bool {
	f := img.FuncAt(target)
	if f == nil || f.Addr != target {
		return false
	}
	switch BareName(f.Name) {
	case "__cxa_begin_catch", "_Unwind_Resume", "__cxa_call_unexpected":
		return true
	}
	return false
}

// looksLikeEntry reports whether an instruction is a typical first
// instruction of a procedure.
func looksLikeEntry(op isa.FrameOp) bool {
	return op.Endbr || op.Frame == isa.PushBP || op.PushCS || op.SubSP
}

// frameIntervals protects the code between a stack allocation (sub rsp,n)
// and the last matching deallocation, and between setting up a frame
// pointer (mov rbp,rsp) and the last restore of BP, each searched up to the
// next unprotected candidate start that looks like a procedure entry.
// Those starts cut the instructions into segments, and the last match of
// each kind is found once per segment: code with few such starts (a
// stripped Go binary: 4 million instructions, no endbr64 or push rbp at
// entries) made a search from every allocation quadratic.
func frameIntervals(insts []isa.SweepInst, cands []uint64, prot []structure.Range) []structure.Range {
	strong := map[uint64]bool{}
	for _, c := range cands {
		if i, ok := instAt(insts, c); ok && find(prot, c) < 0 && looksLikeEntry(insts[i].Op) {
			strong[c] = true
		}
	}
	var out []structure.Range
	for lo := 0; lo < len(insts); {
		hi := lo + 1
		for hi < len(insts) && !strong[insts[hi].Addr] {
			hi++
		}
		out = appendFrameIntervals(out, insts[lo:hi])
		lo = hi
	}
	return out
}

// appendFrameIntervals adds the frame intervals of one segment: from each
// allocation or frame setup to the last matching release after it.
func appendFrameIntervals(out []structure.Range, seg []isa.SweepInst) []structure.Range {
	lastAdd := map[int64]int{} // add rsp,n by -n (the matching sub's n)
	lastLeave, lastLoad := -1, -1
	for j, in := range seg {
		o := in.Op
		if o.AddSP {
			lastAdd[-o.Imm] = j
		}
		if o.Frame == isa.Leave || o.Frame == isa.PopBP || o.Frame == isa.LoadBP {
			lastLeave = j
		}
		if o.Frame == isa.PopBP || o.Frame == isa.LoadBP {
			lastLoad = j
		}
	}
	for i, in := range seg {
		op := in.Op
		j := -1
		switch {
		case op.SubSP:
			if k, ok := lastAdd[op.Imm]; ok {
				j = k
			}
		case op.Frame == isa.BPFromSP:
			j = lastLeave
		case op.Frame == isa.StoreBP:
			j = lastLoad
		default:
			continue
		}
		if j > i {
			// The allocating instruction may itself be a procedure's first.
			out = append(out, structure.Range{Lo: in.Addr + 1, Hi: seg[j].Addr + uint64(seg[j].Op.Len)})
		}
	}
	return out
}
