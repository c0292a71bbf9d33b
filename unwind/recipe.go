package unwind

import (
	"fmt"

	"bloop/isa"
)

// Reg names a register an unwind recipe is relative to.
type Reg uint8

// Registers of a recipe. RegNone marks a recipe that cannot unwind.
const (
	RegNone Reg = iota
	RegSP
	RegBP
)

func (r Reg) String() string {
	switch r {
	case RegSP:
		return "sp"
	case RegBP:
		return "bp"
	}
	return "?"
}

// Recipe tells, for every pc in [Lo, Hi), where the caller's frame is:
// the caller's stack pointer (the canonical frame address, CFA) is
// CFA+CFAOff, the return address is stored at CFA+RAOff (or is still in
// the link register: RAInLR), and the caller's frame pointer is stored at
// CFA+BPOff when BPSaved, else it is still in BP.
type Recipe struct {
	Lo, Hi  uint64
	CFA     Reg
	CFAOff  int64
	RAOff   int64
	BPSaved bool
	BPOff   int64
	// RAInDI: the return address is not on the stack but in rdi (it was
	// popped there: glibc's vfork); only the sampled frame's rdi is known.
	RAInDI bool
	// RAInLR: the return address is still in the link register (x30,
	// LR), as at a procedure's entry on aarch64 and ppc64; only the
	// sampled frame's is known.
	RAInLR bool
	// RABits: the saved return address's low RABits bits are the address
	// (aarch64's pointer authentication signs the others); 0: all.
	RABits uint8
	// AltCFA: where a frame pointer is set up and SP's offset is known
	// too, the CFA is also AltCFA+AltCFAOff, the other of SP and BP
	// (aarch64 and ppc64 only: gcc's .eh_frame names one rule there,
	// clang's the other).
	AltCFA    Reg
	AltCFAOff int64
	// AltRA: where the return address is in LR (RAInLR) and also in its
	// slot at CFA+AltRAOff: stored before the frame is allocated, or
	// reloaded by an epilogue that has not returned yet (gcc -O0's ppc64
	// .eh_frame names the slot until the return).
	AltRA    bool
	AltRAOff int64
}

// OK reports whether the recipe can unwind.
func (r Recipe) OK() bool { return r.CFA != RegNone }

func (r Recipe) String() string {
	if !r.OK() {
		return fmt.Sprintf("[%#x,%#x) unknown", r.Lo, r.Hi)
	}
	bp := "bp=bp"
	if r.BPSaved {
		bp = fmt.Sprintf("bp=[cfa%+d]", r.BPOff)
	}
	if r.RAInDI {
		return fmt.Sprintf("[%#x,%#x) cfa=%s%+d ra=rdi %s", r.Lo, r.Hi, r.CFA, r.CFAOff, bp)
	}
	if r.RAInLR {
		return fmt.Sprintf("[%#x,%#x) cfa=%s%+d ra=lr %s", r.Lo, r.Hi, r.CFA, r.CFAOff, bp)
	}
	return fmt.Sprintf("[%#x,%#x) cfa=%s%+d ra=[cfa%+d] %s", r.Lo, r.Hi, r.CFA, r.CFAOff, r.RAOff, bp)
}

// state is what the linear scan knows about the frame before an
// instruction. Offsets are distances below the CFA: SP = CFA - sp.
type state struct {
	spKnown bool
	sp      int64 // CFA - SP
	bpKnown bool
	bp      int64 // CFA - BP, while BP holds an address in this frame
	cfaBP   bool  // the frame is addressed through BP (a frame pointer was set up)
	bpSaved bool
	bpSave  int64 // the caller's BP is stored at CFA - bpSave
	raDI    bool  // the return address was popped into rdi
	// Link-register architectures: where the return address is.
	lrLive  bool  // in the link register
	copyReg uint8 // in the register (plus 1) LR was copied to (ppc64's r0)
	raSaved bool
	raSave  int64 // stored at CFA - raSave
	framed  bool  // SP has been lowered: the procedure's frame exists
}

// entryOf is the state right after a call under abi: on x86-64 the
// return address on top of the stack and the caller's BP still in BP, on
// aarch64 and ppc64 SP at the CFA and the return address in the link
// register.
func entryOf(abi isa.FrameABI) state {
	return state{spKnown: true, sp: abi.EntryCFA, lrLive: abi.LinkRegister}
}

// recipe turns a state into the rule the unwinder applies. Like x86-64's
// .eh_frame, it prefers the frame pointer once one is set up: BP stays
// valid where SP moves by amounts unknown to the scan (alloca,
// realignment). With abi.CFAFromSP (aarch64, ppc64), as their .eh_frame,
// it does so only where fromBP says the procedure moves SP so. frames says
// the procedure allocates a frame (see below).
func (s state) recipe(lo, hi uint64, abi *isa.FrameABI, fromBP, frames bool) Recipe {
	r := Recipe{Lo: lo, Hi: hi, RAOff: -8}
	bp := s.cfaBP && s.bpKnown
	switch {
	case bp && (!abi.CFAFromSP || fromBP || !s.spKnown):
		r.CFA, r.CFAOff = RegBP, s.bp
	case s.spKnown:
		r.CFA, r.CFAOff = RegSP, s.sp
	}
	if s.bpSaved {
		r.BPSaved, r.BPOff = true, -s.bpSave
	}
	r.RAInDI = s.raDI
	if abi.LinkRegister {
		r.RAOff, r.RABits = 0, abi.RABits
		if s.bpSaved && s.spKnown && s.bpSave > s.sp {
			// Saved below SP (ppc64's leaves use the 288 bytes there):
			// no stack copy holds it, and only frames addressed through
			// BP, which save it in their frame, need the caller's.
			r.BPSaved, r.BPOff = false, 0
		}
		switch {
		case bp && s.spKnown && r.CFA == RegSP:
			r.AltCFA, r.AltCFAOff = RegBP, s.bp
		case bp && s.spKnown && r.CFA == RegBP:
			r.AltCFA, r.AltCFAOff = RegSP, s.sp
		}
		// A return address stored before the frame is allocated is
		// still in LR too: gcc's .eh_frame describes the store at the
		// allocation (ppc64's std r0,16(r1); stdu r1,-N(r1)), glibc's
		// assembly, which allocates none, at the store.
		switch {
		case s.raSaved && (s.framed || !s.lrLive || !frames):
			r.RAOff = -s.raSave
		case s.lrLive:
			r.RAInLR = true
			if s.raSaved {
				r.AltRA, r.AltRAOff = true, -s.raSave // stored, the frame not yet allocated
			}
		default:
			return Recipe{Lo: lo, Hi: hi} // the return address is lost: no rule
		}
	}
	return r
}

// atReturn reports whether the state is ret, the one a return instruction
// expects: return address on top of the stack (or in the link register),
// caller's BP restored.
func (s state) atReturn(ret state) bool {
	return s.spKnown && s.sp == ret.sp && !s.cfaBP && !s.bpSaved && s.lrLive == ret.lrLive && !s.raSaved
}

// linkOps applies the stores and loads of the caller's BP and of the
// return address that an instruction makes besides moving SP, at offsets
// from SP before it, and its moves of the link register and its copy.
func linkOps(st state, op isa.FrameOp) state {
	slot := func(off int16) (int64, bool) { return st.sp - int64(off), st.spKnown }
	switch op.BPSlot {
	case isa.SlotStore:
		if at, ok := slot(op.BPOff); ok && !st.bpSaved && !st.bpKnown {
			st.bpSaved, st.bpSave = true, at
		}
	case isa.SlotLoad:
		if at, ok := slot(op.BPOff); ok && st.bpSaved && at == st.bpSave {
			st.bpSaved = false
		}
		st.bpKnown, st.cfaBP = false, false
	}
	at, ok := slot(op.RAOff)
	switch op.RASlot {
	case isa.SlotStore:
		if ok && st.lrLive && !st.raSaved {
			st.raSaved, st.raSave = true, at
		}
	case isa.SlotStoreCopy:
		if ok && st.copyReg == op.Reg && !st.raSaved {
			st.raSaved, st.raSave = true, at
		}
	case isa.SlotLoad:
		st.lrLive = ok && st.raSaved && at == st.raSave
		if st.lrLive {
			st.raSaved = false
		}
	case isa.SlotLoadCopy:
		switch {
		case ok && st.raSaved && at == st.raSave:
			st.copyReg = op.Reg
		case st.copyReg == op.Reg:
			st.copyReg = 0
		}
	}
	switch op.LR {
	case isa.LRToCopy:
		if st.lrLive {
			st.copyReg = op.Reg
		} else if st.copyReg == op.Reg {
			st.copyReg = 0
		}
	case isa.LRFromCopy:
		st.lrLive = st.copyReg != 0 && st.copyReg == op.Reg
		if st.lrLive {
			st.raSaved = false
		}
	case isa.LRClobber:
		st.lrLive = false
	case isa.CopyClobber:
		st.copyReg = 0
	case isa.NoLR:
		if op.Reg == st.copyReg && op.RASlot != isa.SlotStoreCopy && op.RASlot != isa.SlotLoadCopy {
			st.copyReg = 0 // another value written there
		}
	}
	return st
}

// size is the frame size the canonical-frame heuristic compares.
func (s state) size() int64 {
	if s.cfaBP {
		return 1 << 40 // a frame-pointer frame is never smaller than a later one
	}
	if !s.spKnown {
		return -1
	}
	return s.sp
}
