package isa

// What an instruction set's ABI adds to the loader's and cfg's work
// beyond decoding: where its PLT stubs are and how they are laid out, its
// table of contents, its local entries, how far back a jump table's
// setup lies, and the instruction after a call that is the call's. Each
// is an optional interface with the default the other sets have.

// PLTLayout is the layout of an executable .plt: the lazy-binding
// trampoline before the stubs (PLT0: 16 bytes on x86-64, 8 instructions
// on aarch64) and each stub's size. .plt.sec stubs are SecEntry bytes.
type PLTLayout struct {
	Header, Entry, SecEntry uint64
}

// PLTLayouter is implemented by the instruction sets whose .plt is code.
type PLTLayouter interface {
	PLTLayout() PLTLayout
}

// PLT layouts of the instruction sets that have one.
func (amd64) PLTLayout() PLTLayout { return PLTLayout{Header: 16, Entry: 16, SecEntry: 16} }
func (arm64) PLTLayout() PLTLayout { return PLTLayout{Header: 32, Entry: 16, SecEntry: 16} }

// Stub is a linker-made call stub found in the code: it jumps through
// the GOT or PLT slot Slot, from Addr to End.
type Stub struct {
	Addr, End, Slot uint64
}

// StubFinder is implemented by the instruction sets whose PLT call stubs
// lie in the code sections, usually without symbols, their .plt being
// data (ppc64 ELFv2): CodeStubs finds those of the section [addr,
// addr+len(code)) whose slot want accepts (the others, long-branch stubs
// to local code, are passed over one word at a time).
type StubFinder interface {
	CodeStubs(mem Memory, code []byte, addr uint64, want func(slot uint64) bool) []Stub
}

// SymbolABI is implemented by the instruction sets whose ELF symbols carry
// more than an address (ppc64 ELFv2).
type SymbolABI interface {
	// LocalEntry is the local entry of a function symbol at value with
	// st_other other (calls from the same module enter there), 0 when
	// it has none.
	LocalEntry(value uint64, other uint8) uint64
	// TOCFromGOT is the TOC base of a module without a .TOC. symbol,
	// from the address of its .got.
	TOCFromGOT(got uint64) uint64
	// TOCSymbol is the name of the symbol that gives the TOC base.
	TOCSymbol() string
}

// tableReacher is implemented by the instruction sets whose jump tables
// are set up further before the jump than x86-64's.
type tableReacher interface{ tableReach() int }

// TableReach is how many instructions before an indirect jump cfg gives
// JumpTable: x86-64 has a table's address and index in one memory
// operand, 32 suffice; the fixed-width sets spend several instructions
// on it, and clang sets a table's base before its loop (35 instructions
// above the second bctr of ctrl-ppc64le-clang14-O2's main): 64.
func TableReach(a Arch) int {
	if r, ok := a.(tableReacher); ok {
		return r.tableReach()
	}
	return 32
}

func (arm64) tableReach() int   { return 64 }
func (ppc64le) tableReach() int { return 64 }

// callSlotter is implemented by the instruction sets whose calls are
// followed by an instruction that belongs to them.
type callSlotter interface{ callSlot(op FrameOp) bool }

// CallSlot reports whether op, right after a call, is the call's own:
// ppc64's TOC restore (ld r2,24(r1)), or the nop the linker leaves there
// when the callee shares the caller's TOC. It is neither padding nor a
// procedure's start.
func CallSlot(a Arch, op FrameOp) bool {
	if c, ok := a.(callSlotter); ok {
		return c.callSlot(op)
	}
	return false
}

func (ppc64le) callSlot(op FrameOp) bool { return op.TOCRestore || op.Pad && op.Flow == Other }
