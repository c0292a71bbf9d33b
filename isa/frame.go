package isa

// FrameKind classifies an instruction by its effect on the stack frame:
// the seven frame-relevant kinds of the paper, split finer. SP is the
// stack pointer, BP the frame pointer, whatever the architecture calls them.
type FrameKind uint8

const (
	None      FrameKind = iota // not frame-relevant
	SPAdd                      // SP += imm (push/pop/sub/add/lea on SP); imm = bytes released
	SPUnknown                  // SP moves by an amount the scan cannot know (alloca, and-realign)
	SPFromBP                   // SP = BP + imm
	BPFromSP                   // BP = SP + imm: frame pointer set up
	BPWrite                    // BP gets any other value
	PushBP                     // push the caller's BP
	PopBP                      // pop it
	StoreBP                    // store BP at [SP+imm]
	LoadBP                     // load BP from [SP+imm]
	Leave                      // SP = BP; pop BP
	Enter                      // push BP; BP = SP; SP -= imm
)

// FrameOp is one decoded instruction as the scans over raw code see it
// (the unwinder's recipes, procedure-bounds inference). The small fields
// come first, so a FrameOp packs into 48 bytes: procs keeps one per
// instruction of a stripped region (tens of millions in a large Go binary).
type FrameOp struct {
	Flow   Kind      // effect on control flow, as Decode gives it
	Frame  FrameKind // effect on the frame
	Len    uint8     // at most 15
	Pad    bool      // padding between procedures (nop, int3)
	Endbr  bool      // an indirect-branch landing mark (endbr64): a likely procedure entry
	PushCS bool      // push of a callee-saved register (a prologue)
	SubSP  bool      // SP -= imm (a prologue, or a frame allocation)
	AddSP  bool      // SP += imm (an epilogue)
	// Inherits marks a copy of the return-value or frame register to
	// another register, and operands based on the frame register: code
	// that starts with one uses a value it did not compute, as a landing
	// pad does (the exception in the return register, the frame in BP),
	// but no procedure entry (no argument comes in those registers).
	Inherits bool
	// PopDI marks pop %rdi: at a procedure's entry, glibc's vfork pops
	// its return address there to keep it out of the stack the child
	// shares (the unwinder reads it from the sampled rdi).
	PopDI  bool
	Imm    int64
	Target uint64 // direct jump/call target; 0 when indirect
	PCRel  uint64 // the address a pc-relative address computation yields (a jump table's base)
	Table8 uint64 // a jump through a table of absolute 8-byte targets: the table
	CmpImm int64  // compare of a register with an immediate: a jump table's bound (0 when not a compare)
}
