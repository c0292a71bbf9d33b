package unwind

import (
	"sort"

	"bloop/isa"
)

// interval is a run of instructions with one frame state, as the scan
// builds it.
type interval struct {
	lo      uint64
	st      state
	guessed bool // the state is a guess made after a return or jump
	branchy bool // holds a branch, jump or call (ends the canonical-frame walk)
	guard   bool // holds conditional branches only (a guard before the prologue)
}

// seen is a state recorded at a branch target.
type seen struct {
	st      state
	guessed bool
}

// lastJump describes the procedure's final unconditional jump, for the
// hot/cold split test.
type lastJump struct {
	ok     bool
	target uint64
	st     state
}

type scanner struct {
	p          Proc
	ivs        []interval
	guessStart int // first interval of the current guessed run, or -1
	fwd        map[uint64]seen
	entry, ret state // the states at the procedure's entry and at a return
	abi        *isa.FrameABI
	spMoves    bool // SP moves by amounts the scan cannot know (alloca)
	frames     bool // the procedure lowers SP
	konst      konst
}

// konst is the constant the instructions just before built in a
// register, for the SP moves by a register of large frames.
type konst struct {
	reg uint8 // register + 1; 0: none
	val int64
	age int // instructions since the last constant operation
}

// maxKonstAge is how far before its use a constant is trusted: the
// compilers build it right before (mov x12, #n; sub sp, sp, x12).
const maxKonstAge = 2

// resolve turns an SP move by a register holding a known constant into
// SPAdd, and any other into SPUnknown.
func (k *konst) resolve(op isa.FrameOp) isa.FrameOp {
	k.age++
	fresh := k.reg != 0 && k.reg == op.Reg && k.age <= maxKonstAge
	switch op.Frame {
	case isa.ConstSet:
		*k = konst{reg: op.Reg, val: op.Imm}
	case isa.ConstOr:
		if fresh {
			k.val, k.age = k.val|op.Imm, 0
		}
	case isa.ConstKeep:
		if fresh {
			k.val, k.age = k.val&^(0xffff<<op.Shift)|op.Imm, 0
		}
	case isa.SPAddReg:
		if fresh {
			op.Frame, op.Imm = isa.SPAdd, op.Imm*k.val
		} else {
			op.Frame = isa.SPUnknown
		}
	}
	return op
}

// scan computes p's recipes by one linear pass over its instructions,
// starting from state init. Besides the paper's rules (new interval at each
// frame-relevant instruction, canonical frame after a return or tail call,
// the check at ret), it records the state at forward branch targets and
// uses it where the scan arrives after a jump, and it checks guesses
// against states known at join points and backward branch targets.
func (m *Module) scan(p Proc, init state) ([]Recipe, lastJump) {
	s := &scanner{p: p, guessStart: -1, fwd: map[uint64]seen{}, entry: m.entry, ret: m.entry, abi: &m.abi}
	for t, in := range m.inbound {
		if p.Lo < t && t < p.Hi {
			s.fwd[t] = in
		}
	}
	// A cold part's state at its start is only a guess when no jump into
	// it is known (a jump table's, say): the checks at its returns and
	// tail calls may correct it.
	cur, guessed := init, isColdName(p.Name) && init == m.entry
	if guessed {
		s.guessStart = 0
	}
	brk, brkCanon := false, false // the previous instruction does not fall through
	afterCall := false
	var last lastJump
	sec := m.Img.SectionAt(p.Lo)
	for addr := p.Lo; addr < p.Hi; {
		end := addr + uint64(m.arch.MaxLen())
		if sec != nil && end > sec.End() {
			end = sec.End()
		}
		op := m.framer.Frame(m.Img.Bytes(addr, end), addr)
		if brk && op.Pad {
			// Padding after a return or jump is never run: keep looking for
			// the next real instruction before choosing its state.
			addr += uint64(op.Len)
			continue
		}
		var fresh bool
		cur, guessed, fresh = s.arrive(addr, cur, guessed, brk, brkCanon, afterCall)
		s.add(addr, cur, guessed, fresh)
		if !op.Pad && op.Flow != isa.Invalid {
			last = lastJump{}
		}

		op = s.konst.resolve(op)
		next := cur
		brk, brkCanon, afterCall = false, false, false
		if op.Frame != isa.None {
			// The popped return address is back once SP moves again
			// (vfork pushes it before returning).
			next.raDI = false
		}
		if op.BPSlot != isa.NoSlot || op.RASlot != isa.NoSlot || op.LR != isa.NoLR || next.copyReg != 0 && op.Reg == next.copyReg {
			next = linkOps(next, op)
		}
		next = m.frameEffect(s, next, op)
		switch op.Flow {
		case isa.Call, isa.IndirectCall:
			// The callee returns with LR (and r0, a scratch register)
			// holding other values.
			next.lrLive, next.copyReg = false, 0
			s.ivs[len(s.ivs)-1].branchy = true
			s.ivs[len(s.ivs)-1].guard = false
			// An exception landing pad (from the LSDA, which the loader
			// reads) runs in the frame of the call that throws: treat it as
			// a branch target of the call.
			if pad, ok := m.Img.PadFor(addr); ok && pad != 0 {
				cur, guessed = s.branch(m, addr, pad, cur, guessed)
				next = cur
			}
			afterCall = true
		case isa.CondJump:
			if iv := &s.ivs[len(s.ivs)-1]; !iv.branchy {
				iv.guard = true
			}
			s.ivs[len(s.ivs)-1].branchy = true
			cur, guessed = s.intoKnown(m, op.Target, cur, guessed)
			cur, guessed = s.branch(m, addr, op.Target, cur, guessed)
			next = cur
		case isa.Jump:
			s.ivs[len(s.ivs)-1].branchy = true
			s.ivs[len(s.ivs)-1].guard = false
			if guessed && s.guessStart >= 0 && cur != s.ret && m.tailCallTo(p, op.Target) {
				// A tail call leaves the frame as a return does: the
				// paper's check at ret settles the guess.
				cur, guessed = s.fix(cur, s.ret), false
			}
			cur, guessed = s.intoKnown(m, op.Target, cur, guessed)
			cur, guessed = s.branch(m, addr, op.Target, cur, guessed)
			next = cur
			brk = true
			brkCanon = op.Target < p.Lo || op.Target >= p.Hi // a tail call
			last = lastJump{ok: true, target: op.Target, st: cur}
		case isa.IndirectJump:
			s.ivs[len(s.ivs)-1].branchy = true
			s.ivs[len(s.ivs)-1].guard = false
			brk = true
			brkCanon = cur.atReturn(s.ret) // a tail call through a register
		case isa.Return:
			if !cur.atReturn(s.ret) {
				s.atRet(addr, cur, guessed) // fixes the intervals; the state after ret is unknown
				guessed = false
			}
			brk, brkCanon = true, true
		case isa.Halt:
			brk = !op.Pad
		}
		if !next.spKnown {
			next.sp = 0
		}
		cur = next
		addr += uint64(op.Len)
	}
	return s.recipes(), last
}

// transient reports whether state cur, at a jump within the procedure,
// holds more stack than the canonical frame c: arguments pushed for a
// call the jump goes on to (gcc's push; push; jmp to a shared call), which
// the code after the jump, reached from elsewhere (a jump table), does
// not have. The canonical frame is the better guess there.
func transient(cur, c state) bool {
	return cur.spKnown && c.spKnown && !cur.cfaBP && !c.cfaBP && cur.sp > c.sp &&
		cur.bpSaved == c.bpSaved && cur.bpSave == c.bpSave && !cur.raDI
}

// intoKnown settles a guessed run of a cold part at its jump back into a
// procedure already scanned (its hot part): the frame there is known, and
// the cold part's is the same frame (python3.11's sre_ucs4_match.cold,
// entered from a jump table only, was taken for a frame at its entry).
// x86-64 only: a recipe there gives SP's offset and BP's slot, all of the
// state a jump carries.
func (s *scanner) intoKnown(m *Module, target uint64, cur state, guessed bool) (state, bool) {
	p := s.p
	if !guessed || s.guessStart < 0 || m.abi.LinkRegister || !isColdName(p.Name) || p.Lo <= target && target < p.Hi ||
		!cur.spKnown || cur.cfaBP {
		return cur, guessed
	}
	q := m.ProcAt(target)
	rs, done := m.recipes[q]
	if q < 0 || !done || isColdName(m.procs[q].Name) {
		return cur, guessed
	}
	j := sort.Search(len(rs), func(j int) bool { return rs[j].Hi > target })
	if j == len(rs) || rs[j].Lo > target || rs[j].CFA != RegSP || rs[j].RAInDI {
		return cur, guessed
	}
	want := cur
	want.sp, want.bpKnown, want.bp = rs[j].CFAOff, false, 0
	want.bpSaved, want.bpSave = rs[j].BPSaved, 0
	if rs[j].BPSaved {
		want.bpSave = -rs[j].BPOff
	}
	if want == cur {
		return cur, guessed
	}
	return s.fix(cur, want), false
}

// tailCallTo reports whether a jump from p to target is a tail call: target
// is the entry of another procedure named by a symbol (not a cold part,
// which continues its caller's frame).
func (m *Module) tailCallTo(p Proc, target uint64) bool {
	if p.Lo <= target && target < p.Hi {
		return false
	}
	j := m.ProcAt(target)
	if j < 0 {
		return false
	}
	q := m.procs[j]
	return q.Lo == target && q.Name != "" && !q.Inferred && !isColdName(q.Name)
}

// arrive is the state the scan continues with at addr: a branch target's
// recorded state, the canonical frame or a guess after an instruction
// that does not fall through (brk), else cur; fresh marks a state not
// reached by falling through.
func (s *scanner) arrive(addr uint64, cur state, guessed, brk, brkCanon, afterCall bool) (_ state, _, fresh bool) {
	if rec, ok := s.fwd[addr]; ok {
		switch {
		case brk:
			cur, guessed, fresh = rec.st, rec.guessed, true
			if !guessed {
				s.guessStart = -1
			}
		case rec.st != cur && afterCall && !rec.guessed:
			// After a call that may not return (gcc's cold code is a
			// chain of blocks ending in calls to _Unwind_Resume and
			// the like) a known state at a branch target wins.
			cur, guessed, fresh = rec.st, false, true
			s.guessStart = -1
		case guessed && !rec.guessed && s.guessStart >= 0:
			// Falling into a branch target whose state is known: it
			// settles the guess, whether it confirms it (then the run
			// is known, and can repair later guesses that jump back
			// into it) or not (then the run is shifted to agree).
			cur = s.fix(cur, rec.st)
			guessed = false
		}
	} else if brk {
		if c := s.canonical(); brkCanon || transient(cur, c) {
			cur = c
		}
		guessed, fresh = true, true
	}
	return cur, guessed, fresh
}

// frameEffect is the state after the frame operation op (scan's first
// half of an instruction's effect; the control flow is the second).
func (m *Module) frameEffect(s *scanner, next state, op isa.FrameOp) state {
	switch op.Frame {
	case isa.SPAdd:
		next.raDI = op.PopDI && next.spKnown && next.sp == 8 && !next.cfaBP
		next.sp -= op.Imm
		next.framed = next.framed || m.abi.LinkRegister && op.Imm < 0
		s.frames = s.frames || op.Imm < 0
	case isa.SPUnknown:
		next.spKnown = false
		s.spMoves = true
	case isa.SPFromChain:
		// The back chain at SP is the caller's SP once this procedure
		// has allocated its frame.
		next.spKnown = next.spKnown && next.sp > 0
		next.sp = 0
	case isa.SPFromBP:
		next.spKnown, next.sp = next.bpKnown, next.bp-op.Imm
		if m.abi.SPRestoreEndsFP && next.spKnown {
			next.cfaBP = false
		}
	case isa.BPFromSP:
		// Only BP pointing at the saved caller's BP (push rbp; mov
		// rbp,rsp) is a frame pointer; otherwise (lea rbp,[rsp+d], or a
		// mov deeper in the frame) rbp is an ordinary register that
		// happens to hold a stack address, as .eh_frame also sees it.
		next.bpKnown, next.bp = next.spKnown, next.sp-op.Imm
		next.cfaBP = next.bpKnown && m.fpFrame(next, op)
	case isa.BPWrite:
		next.bpKnown, next.cfaBP = false, false
	case isa.PushBP:
		next.sp += 8
		if !next.bpSaved && !next.bpKnown && next.spKnown {
			next.bpSaved, next.bpSave = true, next.sp
		}
	case isa.PopBP:
		if next.bpSaved && (!next.spKnown || next.sp == next.bpSave) {
			next.bpSaved = false
		}
		next.sp -= 8
		next.bpKnown, next.cfaBP = false, false
	case isa.StoreBP:
		if !next.bpSaved && !next.bpKnown && next.spKnown {
			next.bpSaved, next.bpSave = true, next.sp-op.Imm
		}
	case isa.LoadBP:
		if next.bpSaved && next.spKnown && next.sp-op.Imm == next.bpSave {
			next.bpSaved = false
		}
		next.bpKnown, next.cfaBP = false, false
	case isa.Leave:
		next.spKnown, next.sp = next.bpKnown, next.bp-8
		next.bpKnown, next.cfaBP, next.bpSaved = false, false, false
	case isa.Enter:
		next.sp += 8
		if !next.bpSaved && !next.bpKnown {
			next.bpSaved, next.bpSave = next.spKnown, next.sp
		}
		next.bpKnown, next.bp, next.cfaBP = next.spKnown, next.sp, next.spKnown
		next.sp += op.Imm
	}
	return next
}

// add starts a new interval at addr when the state changes or a guess
// begins there.
func (s *scanner) add(addr uint64, st state, guessed, fresh bool) {
	n := len(s.ivs)
	if n > 0 && !fresh && s.ivs[n-1].st == st && s.ivs[n-1].guessed == guessed {
		return
	}
	if n > 0 && s.ivs[n-1].lo == addr {
		s.ivs = s.ivs[:n-1]
	}
	s.ivs = append(s.ivs, interval{lo: addr, st: st, guessed: guessed})
	if fresh && guessed {
		s.guessStart = len(s.ivs) - 1
	}
}

// branch records the state at a branch target and checks a guessed state
// against the known state at a backward target.
func (s *scanner) branch(m *Module, addr, target uint64, cur state, guessed bool) (state, bool) {
	switch {
	case target < s.p.Lo || target >= s.p.Hi:
		if cur != s.entry {
			if old, ok := m.inbound[target]; !ok || old.guessed && !guessed {
				m.inbound[target] = seen{cur, guessed}
			}
		}
	case target > addr:
		if old, ok := s.fwd[target]; !ok || old.guessed && !guessed {
			s.fwd[target] = seen{cur, guessed}
		}
	default:
		i := sort.Search(len(s.ivs), func(i int) bool { return s.ivs[i].lo > target }) - 1
		if i >= 0 && guessed && !s.ivs[i].guessed && s.ivs[i].st != cur && s.guessStart >= 0 {
			return s.fix(cur, s.ivs[i].st), false
		}
	}
	return cur, guessed
}

// atRet handles a return whose state is not the expected one: the guess
// made after the last return or jump was wrong, so the intervals since
// then are adjusted by the difference (the paper's check at ret). The ret
// itself always has the return address on top of the stack.
func (s *scanner) atRet(addr uint64, cur state, guessed bool) state {
	want := s.ret
	if guessed && s.guessStart >= 0 {
		cur = s.fix(cur, want)
	}
	if cur != want {
		s.add(addr, want, false, true)
	}
	return want
}

// fix shifts the intervals of the current guessed run so that state have
// becomes want, and marks them as known.
func (s *scanner) fix(have, want state) state {
	d := int64(0)
	if have.spKnown && want.spKnown {
		d = have.sp - want.sp
	}
	for i := s.guessStart; i < len(s.ivs); i++ {
		st := &s.ivs[i].st
		if st.spKnown {
			st.sp -= d
		}
		if st.bpSaved == have.bpSaved && st.bpSave == have.bpSave {
			st.bpSaved, st.bpSave = want.bpSaved, want.bpSave
		}
		if st.cfaBP == have.cfaBP && st.bpKnown == have.bpKnown && st.bp == have.bp {
			st.cfaBP, st.bpKnown, st.bp = want.cfaBP, want.bpKnown, want.bp
		}
		if !st.spKnown && want.spKnown && !st.cfaBP {
			st.spKnown, st.sp = true, want.sp
		}
		s.ivs[i].guessed = false
	}
	s.guessStart = -1
	return want
}

// canonical picks the canonical frame: the first frame-pointer interval,
// else the end of the prologue, found by advancing while the frame does
// not shrink and no branch, jump or call has been seen (conditional
// branches in the entry interval aside: a guard before the prologue).
func (s *scanner) canonical() state {
	for _, iv := range s.ivs {
		if iv.st.cfaBP && iv.st.bpKnown {
			return iv.st
		}
	}
	if len(s.ivs) == 0 {
		return s.entry
	}
	c := 0
	// A guard (shrink-wrapping: test; je out before the pushes) does not
	// end the walk: the prologue follows on the fall-through.
	for c+1 < len(s.ivs) && (!s.ivs[c].branchy || c == 0 && s.ivs[c].guard) && !s.ivs[c+1].guessed && s.ivs[c+1].st.size() >= s.ivs[c].st.size() {
		c++
	}
	// With a link register, the prologue is complete once the return
	// address is stored, which shrink-wrapped code does after the guard
	// branches that end the walk (ppc64: mflr r0; ...; bne; std r0,16(r1)).
	if s.abi.LinkRegister && !s.ivs[c].st.raSaved {
		for j := c + 1; j < len(s.ivs) && !s.ivs[j].guessed && s.ivs[j].st.size() >= s.ivs[c].st.size(); j++ {
			if s.ivs[j].st.raSaved {
				c = j
				break
			}
		}
	}
	return s.ivs[c].st
}

// recipes merges equal neighbours and closes each interval at the next.
func (s *scanner) recipes() []Recipe {
	var out []Recipe
	// With a link register, a frame whose return address is neither in
	// LR nor known to be stored (a block the linear scan reached with
	// another path's state, after a call) has it where the procedure
	// stores it: it returns, so it kept it somewhere.
	slot, slotOK := int64(0), false
	for _, iv := range s.ivs {
		if iv.st.raSaved {
			slot, slotOK = iv.st.raSave, true
			break
		}
	}
	for i, iv := range s.ivs {
		hi := s.p.Hi
		if i+1 < len(s.ivs) {
			hi = s.ivs[i+1].lo
		}
		st := iv.st
		if s.abi.LinkRegister && slotOK && !st.raSaved && !st.lrLive {
			st.raSaved, st.raSave = true, slot
		}
		r := st.recipe(iv.lo, hi, s.abi, s.spMoves, s.frames)
		if r.RAInLR && slotOK && st.framed && st.spKnown {
			r.AltRA, r.AltRAOff = true, -slot
		}
		if n := len(out); n > 0 && sameRule(out[n-1], r) {
			out[n-1].Hi = hi
			continue
		}
		out = append(out, r)
	}
	return out
}

func sameRule(a, b Recipe) bool {
	a.Lo, a.Hi, b.Lo, b.Hi = 0, 0, 0, 0
	return a == b
}

// fpFrame reports whether BP, just set from SP (state st after op), is a
// frame pointer the CFA may be found from.
func (m *Module) fpFrame(st state, op isa.FrameOp) bool {
	switch {
	case !m.abi.LinkRegister: // x86-64: push rbp; mov rbp,rsp
		return op.Imm == 0 && st.bpSaved && st.bpSave == st.sp
	case m.abi.FrameRecord: // aarch64: x29 at the frame record, wherever it is
		return st.bpSaved && st.bpSave == st.bp
	}
	// ppc64: mr r31,r1 once the caller's r31 is saved (addi r31,r1,N
	// points into the frame, an ordinary use of r31).
	return op.Imm == 0 && st.bpSaved
}
