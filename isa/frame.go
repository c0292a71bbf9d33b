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
	// SP = [SP]: ppc64's ld r1,0(r1) follows the back chain to the
	// caller's SP.
	SPFromChain
	// Frames too large for an immediate: a constant built in a register
	// (aarch64's mov x12, #0x36d0; ppc64's lis r0,-1; ori r0,r0,32160),
	// then SP moved by it (sub sp, sp, x12; stdux r1,r1,r0).
	ConstSet  // register Reg-1 = Imm
	ConstOr   // register Reg-1 |= Imm
	ConstKeep // register Reg-1 = register Reg-1 &^ (0xffff << Shift) | Imm (movk)
	SPAddReg  // SP += register Reg-1 (Imm 1) or -= it (Imm -1)
)

// Slot is a store or load of a frame slot (the caller's BP, the return
// address) besides what Frame does.
type Slot uint8

const (
	NoSlot    Slot = iota
	SlotStore      // the register itself (BP; the return address in x30)
	SlotLoad
	// The return address through the register a copy of LR was made in
	// (ppc64's mflr r0; std r0,16(r1) and ld r0,16(r1); mtlr r0), if
	// the register FrameOp.Reg names holds it.
	SlotStoreCopy
	SlotLoadCopy
)

// LRMove is what an instruction does to the link register and to the
// register that holds a copy of it (ppc64's r0).
type LRMove uint8

const (
	NoLR        LRMove = iota
	LRToCopy           // mflr rN (N+1 in FrameOp.Reg)
	LRFromCopy         // mtlr rN
	LRClobber          // LR gets another value (bcl 20,31,.+4 reads the pc into it)
	CopyClobber        // the copy register gets another value
)

// FrameABI is what the unwinder and the procedure inference need to know
// of an architecture's calling convention besides single instructions.
type FrameABI struct {
	// LinkRegister: a call leaves the return address in a register (x30,
	// LR), which a procedure stores in its frame only if it calls others.
	LinkRegister bool
	// EntryCFA is the caller's SP minus SP at a procedure's first
	// instruction: 8 on x86-64 (the pushed return address), 0 with a
	// link register.
	EntryCFA int64
	// PLT0CFA is the same at the start of .plt, the lazy-binding
	// trampoline (x86-64's has the relocation index pushed too); 0 when
	// .plt starts with no such difference.
	PLT0CFA int64
	// FrameRecord: a frame pointer is one when it points at the saved
	// caller's BP (aarch64's frame record, wherever in the frame; x86-64's
	// push rbp; mov rbp,rsp); else any frame pointer set up after the
	// caller's is saved is (ppc64's mr r31,r1).
	FrameRecord bool
	// CFAFromSP: the compilers' .eh_frame keeps the CFA on SP while SP's
	// offset is known, and switches to the frame pointer only in
	// procedures that move SP by unknown amounts (aarch64, ppc64);
	// x86-64's switches once a frame pointer is set up.
	CFAFromSP bool
	// SPRestoreEndsFP: once SP is restored from the frame pointer, the
	// CFA is SP's again (ppc64's addi r1,r31,N), not the frame pointer's
	// until the caller's is reloaded (x86-64's lea rsp,[rbp-8]).
	SPRestoreEndsFP bool
	// BackChain: every frame begins with the caller's SP (ppc64's back
	// chain), the outermost with 0, which also ends a call path.
	BackChain bool
	// RABits is how many low bits of a saved return address are the
	// address (aarch64's pointer authentication signs the others); 0: all.
	RABits uint8
	// Fill lists the bytes alignment padding is made of where one byte
	// repeats (x86-64's int3 and nop); fixed-width sets mark their padding
	// words in FrameOp.Pad instead.
	Fill []byte
}

// FrameOp is one decoded instruction as the scans over raw code see it
// (the unwinder's recipes, procedure-bounds inference). The small fields
// come first, so a FrameOp packs into 64 bytes: procs keeps one per
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
	PopDI bool
	// TOCRestore marks ppc64's ld r2,24(r1) (see CallSlot).
	TOCRestore bool
	// Link-register architectures (aarch64, ppc64) store and load the
	// caller's BP and the return address in the same instruction that
	// moves SP (stp x29, x30, [sp, #-32]!): BPSlot and RASlot say what
	// happens at SP+BPOff and SP+RAOff, SP as it was before the
	// instruction; LR what happens to the link register. The copy slot
	// operations and LR moves name the copy's register in Reg.
	BPSlot, RASlot Slot
	LR             LRMove
	BPOff, RAOff   int16
	// Reg is the register (plus 1) of the Const kinds and SPAddReg, of
	// the LR copy's moves and slots, and else (ppc64) the general
	// register the instruction writes; Shift the position of ConstKeep's
	// 16 bits.
	Reg, Shift uint8
	Imm        int64
	Target     uint64 // direct jump/call target; 0 when indirect
	PCRel      uint64 // the address a pc-relative address computation yields (a jump table's base)
	Table8     uint64 // a jump through a table of absolute 8-byte targets: the table
	CmpImm     int64  // compare of a register with an immediate: a jump table's bound (0 when not a compare)
}

// GlobalEntries is implemented by the instruction sets whose direct calls
// may enter a procedure past its first instruction (ppc64 ELFv2's local
// entries): GlobalEntry is where the procedure a call to target enters
// starts.
type GlobalEntries interface {
	GlobalEntry(mem Memory, target uint64) uint64
}

// LinkerStubs is implemented by the instruction sets whose linkers put
// code in the text that is no procedure of the program (ppc64's
// lazy-binding resolver, __glink_PLTresolve, which has an FDE but no
// function symbol, and the branches to it that follow): hpcstruct makes
// no procedure of them, and neither does the inference.
type LinkerStubs interface {
	LinkerStub(mem Memory, addr uint64) bool
}

// GlinkResolvers is implemented by the instruction sets whose linkers
// name the lazy-binding resolver in .dynamic (ppc64's DT_PPC64_GLINK,
// which points 32 bytes before the first lazy PLT entry): GlinkResolver
// returns the resolver's extent, from the target of that entry's branch
// to the entry, as binutils' synthetic __glink_PLTresolve symbol has it.
type GlinkResolvers interface {
	GlinkResolver(mem Memory, dynGlink uint64) (lo, hi uint64, ok bool)
}
