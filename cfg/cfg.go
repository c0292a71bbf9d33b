// Package cfg builds the control-flow graph of one procedure by recursive
// traversal of its machine code, per architecture.
package cfg

import (
	"cmp"
	"errors"
	"iter"
	"slices"

	"bloop/isa"
	"bloop/loader"
	"bloop/structure"
)

// Inst is one decoded instruction.
type Inst struct {
	isa.Inst
	Table []uint64 // resolved targets of an IndirectJump through a jump table
	// shared is how many of the instruction's last bytes are also the
	// start of a later instruction the procedure jumps into (see Span).
	shared uint8
}

// Span is the code the instruction owns: its bytes up to the start of
// the next decoded instruction. Instructions overlap where code jumps into
// the middle of another instruction (vmlinux's retbleed_untrain_ret does
// so on purpose, a misresolved jump table by accident); each keeps the
// bytes from its own start, so every instruction start, the address a
// sample can have, lies in exactly one statement.
func (in *Inst) Span() structure.Range {
	return structure.Range{Lo: in.Addr, Hi: in.End() - uint64(in.shared)}
}

// Block is a basic block.
type Block struct {
	Start, End uint64
	Insts      []Inst
	Succs      []int // successor block indices, intraprocedural edges only
	Preds      []int
}

// Last returns the block's final instruction.
func (b *Block) Last() *Inst { return &b.Insts[len(b.Insts)-1] }

// Graph is a procedure's control-flow graph.
type Graph struct {
	Entry  int
	Blocks []*Block // sorted by Start
	Calls  []uint64 // direct call targets, sorted, unique
	// Continued lists procedure entries this one runs into through a call
	// to the next instruction, by falling out of its extent (FallOut), or
	// through a jump table's entry (Foreign).
	Continued []uint64
	// Undecodable counts bytes where decoding failed; the traversal stops there.
	Undecodable int
	// Overlaps counts instructions that run into the next decoded one.
	Overlaps int
}

// ErrArch says the architecture has no decoder yet.
var ErrArch = errors.New("no control-flow analysis for this architecture yet")

// ErrEntry says the procedure's first instruction does not decode.
var ErrEntry = errors.New("entry does not decode")

// ErrDyninstEntry says the procedure's first instruction is one Dyninst
// 12.3 does not decode (Dyninst.Decode): hpcstruct's parse of it
// is empty.
var ErrDyninstEntry = errors.New("entry does not decode for Dyninst 12.3")

// Options control graph construction.
type Options struct {
	// Arch, when set, is the instruction set to decode with instead of the
	// image machine's: a cubin's, of its generation (isa.BindCUDA).
	Arch isa.Arch
	// NoReturn reports whether a call to target never returns.
	NoReturn func(target uint64) bool
	// Procs answers what the procedure table knows of the code outside
	// the procedure's extent; nil: nothing (every target outside is
	// another procedure).
	Procs Oracle
	// Roots are further entry points that only the unwinder reaches.
	Roots []uint64
	// LandingPad gives the exception landing pad of a call, which Dyninst
	// parses as reachable from the call.
	LandingPad func(call uint64) (uint64, bool)
	// Dyninst, when set, parses as Dyninst 12.3's ParseAPI does
	// (hpcstruct's parse), where it departs from bloop's; nil: bloop's
	// own parse. The Dyninst emulation (package dyninst) gives it.
	Dyninst *Dyninst
}

// Oracle answers the questions about code outside the procedure that
// the procedure table answers, so that a different table can answer
// them otherwise. The Dyninst emulation's parse memo logs every answer
// through a wrapper of this interface: a method added here does not
// compile there until it is logged too.
type Oracle interface {
	// Region gives the extent of code outside the procedure that it
	// continues into (a gcc foo.cold part reached by a jump; the next
	// procedure reached by a call to the next instruction), as Dyninst
	// parses it. ok is false when the target is another procedure.
	Region(t uint64, callNext bool) (lo, hi uint64, ok bool)
	// Foreign gives, under Dyninst.Tables, the extent of the code
	// outside the procedure's regions that a jump-table entry points
	// into: another procedure's (lo its entry), which Dyninst 12.3 parses
	// as this procedure's own where bloop takes the jump for a tail call.
	// libc.so.6's _authenticate jumps through a table to the entries of
	// the four _svcauth_* procedures: hpcstruct writes their code inside
	// it, and them with their gaps only (an entry reached so is
	// Continued). An entry into the middle of a procedure claims none:
	// hpcstruct writes that code under both (where Dyninst reads
	// __strcasecmp_l_sse2's table past its end into the middle of
	// __strcat_sse2_unaligned).
	Foreign(t uint64) (lo, hi uint64, ok bool)
	// JumpInto gives, under Dyninst, the extent of the procedure that a
	// direct jump to t lands in, when t is not that procedure's entry:
	// Dyninst 12.3 takes a jump into the middle of another function for
	// one within the function (its tail-call test asks for a function
	// entry at the target), so the parse continues there, and the code
	// is the jumper's too (glibc's __mempcpy_avx512_unaligned jumps into
	// __memmove_avx512_unaligned, whose size test jumps into
	// __memmove_avx512_unaligned_erms). Jump tables are not asked.
	JumpInto(t uint64) (lo, hi uint64, ok bool)
	// Called reports whether a direct call somewhere in the image enters
	// the procedure's code at t; asked under Dyninst.TailCalls.
	Called(t uint64) bool
}

// Dyninst is the policy of a parse that follows Dyninst 12.3's: where
// its parse departs from bloop's, each departure with the hpcstruct
// output it explains.
type Dyninst struct {
	// FallOut continues, as Dyninst does, where code falls through the
	// end of the procedure's extent: into the next procedure (Region with
	// callNext). Compilers let code run to the end only after a call that
	// never returns, or where one assembly function runs into the next;
	// Dyninst follows it when it does not know that the callee never
	// returns.
	FallOut bool
	// Tables resolves only the jump tables Dyninst resolves
	// (isa.Targets.Dyninst), and follows their entries into other
	// procedures' code (Oracle.Foreign).
	Tables bool
	// TailCalls leaves out the edges of the jumps within the procedure
	// that Dyninst 12.3 takes for tail calls (selfTail).
	TailCalls bool
	// Decode is the instruction set's reading by Dyninst 12.3's decoder
	// and parser: a block ends before an instruction its decoder cannot
	// decode, which is in no block, and what follows is parsed only where
	// another edge leads; where that is the entry, Build fails with
	// ErrDyninstEntry. hpcstruct writes those bytes as gaps (the vptestmb
	// that ends __strcasecmp_evex's parse is a gap of __strcasecmp_l_evex,
	// which the parse runs into). A system call its parser knows not to
	// return has no fall-through, nor a call it takes for a jump; with
	// AnyWord every word of a fixed-width set is an instruction, one
	// without control flow where the decoder knows none, as Dyninst
	// 12.3's ppc64 decoder does: a parse that goes on after a call runs
	// through the traceback table that follows it.
	Decode isa.Dyninst12
}

type region struct{ lo, hi uint64 }

// maxInsts bounds one procedure's decoding so that garbage cannot hang us.
const maxInsts = 4 << 20

// walkBack yields walk's instructions as isa knows them, latest first,
// without copying the walk (asked at every instruction of it).
func walkBack(walk []Inst) iter.Seq[isa.Inst] {
	return func(yield func(isa.Inst) bool) {
		for k := len(walk) - 1; k >= 0; k-- {
			if !yield(walk[k].Inst) {
				return
			}
		}
	}
}

// tailMarker reads the instruction before a jump (isa.Dyninst12.TailMark).
type tailMarker = func(b []byte, addr uint64) isa.TailMark

// tailJump reports whether Dyninst 12.3's x86-64 tail-call test takes a
// jump that follows walk, the instructions decoded since the walk began at
// start, for a tail call by what precedes it (endsFrame), or for one
// alone in the procedure's entry block. selfTail asks the same of the
// jumps back to the entry.
func tailJump(ar isa.Arch, tm tailMarker, img *loader.Image, walk []Inst, start, entry uint64, at *instIndex, all []Inst) bool {
	if tm == nil {
		return false
	}
	if len(walk) == 0 {
		return start == entry
	}
	return endsFrame(tm, img, walk, func() bool {
		for back := uint64(1); back <= uint64(ar.MaxLen()) && back <= start; back++ {
			if i, ok := at.get(start - back); ok && all[i].End() == start {
				return all[i].Kind == isa.Call || all[i].Kind == isa.IndirectCall
			}
		}
		return false
	})
}

// endsFrame is the instructions' part of Dyninst's tail-call test: the
// last of insts, nops skipped, ends a frame (isa.Dyninst12.TailMark: a leave, a pop
// of a register calls preserve, an add to the stack pointer). An add that
// is the first of insts does not when afterCall says a call returns to it:
// it pops the call's arguments.
func endsFrame(tm tailMarker, img *loader.Image, insts []Inst, afterCall func() bool) bool {
	for k := len(insts) - 1; k >= 0; k-- {
		in := &insts[k]
		switch tm(img.Bytes(in.Addr, in.End()), in.Addr) {
		case isa.NopMark:
			if k > 0 {
				continue
			}
		case isa.EpilogueMark:
			return true
		case isa.FreeMark:
			return k > 0 || !afterCall()
		}
		return false
	}
	return false
}

// selfTail reports whether Dyninst 12.3 takes the jump ending block i,
// which stays in the procedure, for a tail call, so that it is no edge of
// the procedure's graph (a tail-recursive procedure has no loop then):
//
//   - a jump to code that a call enters (Called): Dyninst's finalization
//     makes every jump to a block with an incoming call edge a tail call,
//     such as the jump back to the entry of a procedure called anywhere
//     (or to a ppc64 local entry a bl reaches);
//   - on x86-64 (isa.Dyninst12.TailMark), a jump back to the entry right after the
//     end of a frame (endsFrame, on the instructions of its block before
//     it); a jump alone in the entry block is one too. That test also
//     marks jumps elsewhere in the procedure, but Dyninst turns those back
//     (a target the procedure reaches otherwise, or only from that jump,
//     is not a tail call), and only the entry stays.
func selfTail(ar isa.Arch, img *loader.Image, blocks []*Block, i int, entry uint64, opt Options) bool {
	if opt.Dyninst == nil || !opt.Dyninst.TailCalls {
		return false
	}
	b := blocks[i]
	t := b.Last().Target
	if t == b.Last().End() {
		return false // a call to the next instruction, parsed as a jump
	}
	if opt.Procs != nil && opt.Procs.Called(t) {
		return true
	}
	tm := opt.Dyninst.Decode.TailMark
	if tm == nil || t != entry {
		return false
	}
	if len(b.Insts) == 1 {
		return b.Start == entry
	}
	return endsFrame(tm, img, b.Insts[:len(b.Insts)-1], func() bool {
		if i == 0 || blocks[i-1].End != b.Start {
			return false
		}
		switch last := blocks[i-1].Last(); last.Kind {
		case isa.IndirectCall:
			return true
		case isa.Call:
			return opt.NoReturn == nil || !opt.NoReturn(last.Target)
		}
		return false
	})
}

// byAddress puts the instructions in address order, in place, for the
// blocks to share: their index (at) lists them in that order, and each
// 56-byte instruction then moves once, cycle by cycle.
func byAddress(all []Inst, at *instIndex) []Inst {
	order := at.order(len(all))
	// order[k] is where the instruction that belongs at k is now.
	for k := range order {
		if order[k] < 0 {
			continue
		}
		tmp := all[k]
		j := k
		for {
			src := int(order[j])
			order[j] = -1
			if src == k {
				all[j] = tmp
				break
			}
			all[j] = all[src]
			j = src
		}
	}
	return all
}

// bitset is a set of offsets.
type bitset []uint64

func (b bitset) has(i uint64) bool { return i/64 < uint64(len(b)) && b[i/64]&(1<<(i%64)) != 0 }

// sweep decodes region r linearly from its start, as objdump does, and
// returns where instructions start (cached in done). For compiled code it
// is the truth; a jump table without a bound stops at the first entry that
// points elsewhere.
func sweep(ar isa.Arch, img *loader.Image, r region, done map[region]bitset) bitset {
	if s, ok := done[r]; ok {
		return s
	}
	s := make(bitset, (r.hi-r.lo+63)/64)
	for a := r.lo; a < r.hi; {
		in := ar.Decode(img.Bytes(a, r.hi), a)
		s[(a-r.lo)/64] |= 1 << ((a - r.lo) % 64)
		a += uint64(max(in.Len, 1))
	}
	done[r] = s
	return s
}

// backChain returns up to n instructions ending with the one at a, walking
// predecessors backwards (oldest first). Where several lead to an
// instruction, it takes the lowest-addressed one: that is the way into a loop
// from its preheader, where compilers put the jump-table base.
func backChain(all []Inst, at *instIndex, jumps map[uint64][]uint64, a uint64, n, maxLen int) []isa.Inst {
	i, _ := at.get(a)
	chain := []isa.Inst{all[i].Inst}
	seen := map[uint64]bool{a: true}
	for len(chain) < n {
		best, found := uint64(0), false
		// An instruction is at most 15 bytes long.
		for l := uint64(1); l <= uint64(maxLen) && l <= a; l++ {
			if i, ok := at.get(a - l); ok && all[i].Len == int(l) && all[i].Kind.FallsThrough() {
				best, found = a-l, true
				break
			}
		}
		for _, j := range jumps[a] {
			if !found || j < best {
				best, found = j, true
			}
		}
		if !found || seen[best] {
			break
		}
		seen[best] = true
		i, _ := at.get(best)
		chain = append(chain, all[i].Inst)
		a = best
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain
}

func endsBlock(k isa.Kind) bool { return k != isa.Other }

func uniq(s []int) []int {
	out := s[:0]
	for _, x := range s {
		dup := false
		for _, y := range out {
			if x == y {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, x)
		}
	}
	return out
}

// Succs returns the successor lists, the shape havlak.Find takes.
func (g *Graph) Succs() [][]int {
	out := make([][]int, len(g.Blocks))
	for i, b := range g.Blocks {
		out[i] = b.Succs
	}
	return out
}

// DyninstSuccs returns the successor lists in the order Dyninst's loop
// finder (LoopAnalyzer, the WMZC algorithm: one depth-first search)
// visits them: a conditional branch's fall-through before its taken
// edge, a jump table's targets by address. ParseAPI keeps a block's
// out-edges in a std::set<Edge*>, so the true order is that of the edges'
// heap addresses; this is the order the allocation gave on every
// hpcstruct reference but one irreducible nest (libc.so.6's
// rfc3484_sort). For reducible code the order changes nothing; in an
// irreducible region it decides which entry the search reaches first,
// and so which loop encloses which.
func (g *Graph) DyninstSuccs() [][]int {
	out := make([][]int, len(g.Blocks))
	for i, b := range g.Blocks {
		s := b.Succs
		switch last := b.Last(); last.Kind {
		case isa.CondJump:
			if len(s) == 2 && g.Blocks[s[1]].Start == last.End() {
				s = []int{s[1], s[0]}
			}
		case isa.IndirectJump:
			s = slices.Clone(s)
			slices.Sort(s) // blocks are sorted by address
		}
		out[i] = s
	}
	return out
}

// BlockAt returns the index of the block that starts at addr.
func (g *Graph) BlockAt(addr uint64) (int, bool) {
	i, ok := slices.BinarySearchFunc(g.Blocks, addr, func(b *Block, a uint64) int { return cmp.Compare(b.Start, a) })
	return i, ok
}
