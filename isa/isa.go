// Package isa is bloop's one instruction layer: per instruction set, the
// decoding of control flow (branch kinds and targets, calls, returns),
// jump tables, PLT stubs and, where the unwinder runs, frame-relevant
// operations. Every package that reads machine code (cfg, procs, unwind,
// profile, the loader's PLT reader) goes through it.
//
// Each architecture is a set of files named for it (amd64*.go, arm64*.go,
// ppc64le*.go, amdgpu*.go, sass*.go) and one row of the table in this
// file. The files are not named *_amd64.go: binaries are analysed on any
// host.
package isa

import (
	"debug/elf"
	"iter"
)

// Kind classifies an instruction by its effect on control flow.
type Kind uint8

// Instruction kinds.
const (
	Other        Kind = iota
	Jump              // unconditional direct jump
	CondJump          // conditional direct jump (falls through)
	IndirectJump      // jump through a register or memory (jump tables, tail calls)
	Call              // direct call
	IndirectCall      // call through a register or memory
	Return
	Halt       // never falls through (hlt, ud2, int3, brk, trap)
	Invalid    // undecodable bytes
	CondReturn // returns or falls through (ppc64's beqlr)
)

// Inst is one decoded instruction, as control flow sees it.
type Inst struct {
	Addr   uint64
	Len    int
	Kind   Kind
	Target uint64 // direct target of Jump, CondJump, Call
}

// End is the address after the instruction.
func (in *Inst) End() uint64 { return in.Addr + uint64(in.Len) }

// FallsThrough reports whether execution may continue at the next
// instruction.
func (k Kind) FallsThrough() bool {
	return k == Other || k == CondJump || k == Call || k == IndirectCall || k == CondReturn
}

// Memory is the loaded image as jump-table readers need it.
type Memory interface {
	// Bytes returns the code in [lo, hi), cut at the end of its section.
	Bytes(lo, hi uint64) []byte
	// ReadData returns n bytes at addr of any loaded section, or nil.
	ReadData(addr uint64, n int) []byte
}

// Targets says where a jump table's entries may point.
type Targets struct {
	Valid func(uint64) bool // the procedure may jump there
	Start func(uint64) bool // an instruction starts there in a linear sweep
	// Dyninst asks for the tables Dyninst 12.3 resolves only, where an
	// architecture's analysis knows more (hpcstruct's view).
	Dyninst bool
	// Code, asked with Dyninst only, reports code outside the procedure
	// that Dyninst parses as the procedure's own when a table entry
	// points there (another procedure's entry or middle); nil: none.
	Code func(uint64) bool
}

// Arch is what one instruction set provides.
type Arch interface {
	// Name is the architecture's name as bloop prints it (amd64, arm64, ppc64le).
	Name() string
	// MaxLen is the longest instruction in bytes; Align the granularity
	// instructions start at (1 for x86-64, 4 for fixed-width sets).
	MaxLen() int
	Align() int
	// Decode classifies the instruction at the start of b, at addr. An
	// Invalid instruction has Len > 0: decoding resumes after it.
	Decode(b []byte, addr uint64) Inst
	// JumpTable resolves the indirect jump jmp from the instructions
	// that lead to it (path, oldest first, jmp last); nil when the shape is
	// not a jump table.
	JumpTable(mem Memory, path []Inst, jmp Inst, to Targets) []uint64
	// PLTSlot returns the GOT slot the PLT stub at addr (bytes b) jumps
	// through.
	PLTSlot(b []byte, addr uint64) (uint64, bool)
}

// Framer is implemented by the architectures the unwinder knows: it
// classifies an instruction by its effect on the stack frame.
type Framer interface {
	Frame(b []byte, addr uint64) FrameOp
	// ClearFP is the instruction that zeroes the frame pointer, the
	// ABI's mark of the outermost frame (_start, clone); nil where the
	// ABI marks it otherwise (ppc64's null back chain).
	// The slice is shared: callers must not modify it.
	ClearFP() []byte
	ABI() FrameABI
}

// TailMark is what the instruction before a jump says of it
// (Dyninst12.TailMark).
type TailMark uint8

const (
	NoTailMark   TailMark = iota
	NopMark               // padding: the test looks further back
	EpilogueMark          // leave, or a pop of a register calls preserve
	FreeMark              // SP += imm: the end of a frame, unless a call returns to it
)

// Dyninst12 is how Dyninst 12.3's decoder and parser (hpcstruct
// 2023.08's) read an instruction set otherwise than bloop does: one row
// per instruction set (arches), which the Dyninst emulation's policy
// hands to the parse (cfg.Dyninst). The zero value reads as bloop does.
type Dyninst12 struct {
	// Undecodable reports whether Dyninst's decoder fails on the
	// instruction at the start of b, one bloop decodes: hpcstruct's parse
	// ends its block there, as at any instruction it cannot decode.
	Undecodable func(b []byte) bool
	// NoReturnSyscall reports whether Dyninst's parser takes the system
	// call sc for one that does not return (no fall-through); before
	// yields the instructions before sc on the parse's walk, latest
	// first, and is read only for a syscall.
	NoReturnSyscall func(mem Memory, before iter.Seq[Inst], sc Inst) bool
	// Kind is the control-flow kind Dyninst's parser gives an instruction
	// where it reads it otherwise than bloop (AMD GPUs' s_swappc_b64, a
	// call it does not fall through).
	Kind func(in Inst) Kind
	// TailMark, on the instruction sets where Dyninst 12.3 takes a jump
	// for a tail call by the instruction before it (x86-64's isTailCall:
	// a jump after the end of a frame leaves the procedure), reads that
	// instruction, at the start of b.
	TailMark func(b []byte, addr uint64) TailMark
	// AnyWord says the fixed-width decoder takes every word for an
	// instruction (ppc64's): a parse that goes on after a call runs
	// through the data that follows it, such as the traceback table.
	AnyWord bool
}

// Dyninst12For is Dyninst 12.3's reading of ELF machine m; the zero value
// where it reads as bloop does or bloop has no decoder.
func Dyninst12For(m elf.Machine) Dyninst12 {
	for _, r := range arches {
		if r.machine == m {
			return r.dyninst
		}
	}
	return Dyninst12{}
}

// TOCUser is implemented by the instruction sets whose code reaches its
// data through a table-of-contents pointer that the bytes do not hold
// (ppc64's r2): WithTOC returns the set bound to the module's TOC base,
// which PLTSlot and JumpTable then use.
type TOCUser interface {
	WithTOC(toc uint64) Arch
}

// ForTOC is For bound to the module's TOC base where the instruction set
// uses one (toc 0: unknown).
func ForTOC(m elf.Machine, toc uint64) Arch {
	a := For(m)
	if t, ok := a.(TOCUser); ok && toc != 0 {
		return t.WithTOC(toc)
	}
	return a
}

// arches is the dispatch table: one row per instruction set.
var arches = []struct {
	machine elf.Machine
	arch    Arch
	dyninst Dyninst12 // Dyninst 12.3's reading, where it differs
}{
	{elf.EM_X86_64, amd64{}, Dyninst12{Undecodable: amd64{}.dyninst12Undecodable, NoReturnSyscall: amd64{}.dyninst12NoReturnSyscall, TailMark: amd64{}.tailMark}},
	{elf.EM_AARCH64, arm64{}, Dyninst12{}},
	{elf.EM_PPC64, ppc64le{}, Dyninst12{AnyWord: true}},
	{elf.EM_AMDGPU, amdgpu{}, Dyninst12{Kind: amdgpu{}.dyninst12Kind}},
	{elf.EM_CUDA, sass{}, Dyninst12{}}, // by SM number: Generational
}

// For returns the instruction set of ELF machine m, or nil when bloop has
// no decoder for it or m needs a generation to name one (ForGeneration).
func For(m elf.Machine) Arch {
	for _, r := range arches {
		if r.machine == m {
			if _, ok := r.arch.(Generational); ok {
				return nil
			}
			return r.arch
		}
	}
	return nil
}

// Generational is implemented by the instruction sets whose encoding the
// ELF machine alone does not name (NVIDIA SASS, by a cubin's SM number):
// Generation gives the set of generation gen, nil where bloop has none.
type Generational interface {
	Generation(gen int) Arch
}

// ForGeneration is For for generation gen of machine m, where the machine's
// instruction set has generations.
func ForGeneration(m elf.Machine, gen int) Arch {
	for _, r := range arches {
		if g, ok := r.arch.(Generational); ok && r.machine == m {
			return g.Generation(gen)
		}
	}
	return For(m)
}

// CallBefore finds the call instruction that ends at ret (a return
// address) and returns it; a direct call is preferred where the bytes
// read both ways.
func CallBefore(a Arch, mem Memory, ret uint64) (Inst, bool) {
	var indirect Inst
	found := false
	for l := a.Align(); l <= a.MaxLen() && uint64(l) <= ret; l += a.Align() {
		b := mem.Bytes(ret-uint64(l), ret)
		if len(b) != l {
			break
		}
		in := a.Decode(b, ret-uint64(l))
		if in.Len != l {
			continue
		}
		switch in.Kind {
		case Call:
			return in, true
		case IndirectCall:
			if !found {
				indirect, found = in, true
			}
		}
	}
	return indirect, found
}
