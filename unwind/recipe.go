package unwind

import "fmt"

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
// CFA+CFAOff, the return address is stored at CFA+RAOff, and the caller's
// frame pointer is stored at CFA+BPOff when BPSaved, else it is still in BP.
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
}

// entryState is the state right after a call: the return address on top
// of the stack and the caller's BP still in BP.
var entryState = state{spKnown: true, sp: 8}

// recipe turns a state into the rule the unwinder applies. Like
// .eh_frame, it prefers the frame pointer once one is set up: BP stays
// valid where SP moves by amounts unknown to the scan (alloca, realignment).
func (s state) recipe(lo, hi uint64) Recipe {
	r := Recipe{Lo: lo, Hi: hi, RAOff: -8}
	switch {
	case s.cfaBP && s.bpKnown:
		r.CFA, r.CFAOff = RegBP, s.bp
	case s.spKnown:
		r.CFA, r.CFAOff = RegSP, s.sp
	}
	if s.bpSaved {
		r.BPSaved, r.BPOff = true, -s.bpSave
	}
	r.RAInDI = s.raDI
	return r
}

// atReturn reports whether the state is the one a return instruction
// expects: return address on top of the stack, caller's BP restored.
func (s state) atReturn() bool {
	return s.spKnown && s.sp == 8 && !s.cfaBP && !s.bpSaved
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
