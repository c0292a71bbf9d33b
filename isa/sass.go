package isa

// NVIDIA SASS, the machine code of CUDA kernels (cubins, EM_CUDA), as far
// as control flow goes. The encoding changes with the GPU generation the
// cubin's e_flags name (its SM number), so EM_CUDA alone names no decoder
// (Generational). Two families are decoded:
//
//   - sm_60 to sm_62 (Pascal): 64-bit instructions in 32-byte bundles, a
//     control (scheduling) word first and three instructions after it. The
//     control word is decoded as an instruction without control flow, so
//     that code falls through it and blocks keep it: a branch to the first
//     instruction of a bundle targets its control word, and hpcstruct's
//     block starts there too.
//   - sm_70 to sm_90 (Volta to Hopper): 128-bit instructions whose low 12
//     bits are the opcode and bits 12-15 the guard predicate.
//
// The fields were read off the cubins of ../shared: each branch's target
// must land on an instruction inside its kernel, the loops must be those
// of the .cu sources and of hpcstruct --gpucfg's structure files, and the
// offset a branch to itself holds fixes the base (the next instruction).
// Maxwell (sm_5x) shares Pascal's encoding but has no cubin to check it
// against, and sm_100 on is not known: neither is decoded.

import "encoding/binary"

// sass is one generation of SASS (sm 0: the generation is not known yet),
// bound to a cubin's code by BindCUDA.
type sass struct {
	sm int
	// reconv is where Pascal's SYNC, BRK and CONT continue (the target of
	// the SSY, PBK or PCNT that set the point), by their address.
	reconv map[uint64]uint64
	// tables are the targets of indirect branches the cubin lists, calls
	// the callees of its absolute calls.
	tables map[uint64][]uint64
	calls  map[uint64]uint64
}

// Generation is the SASS of SM architecture sm, nil when not decoded.
func (sass) Generation(sm int) Arch {
	if sassFamily(sm) == 0 {
		return nil
	}
	return sass{sm: sm}
}

// sassFamily is the encoding of generation sm: 6 for Pascal's, 7 for
// Volta's to Ada's, 9 for Hopper's; 0 when not decoded.
func sassFamily(sm int) int {
	switch sm {
	case 60, 61, 62:
		return 6
	case 70, 72, 75, 80, 86, 87, 89:
		return 7
	case 90:
		return 9
	}
	return 0
}

func (s sass) Name() string { return "sass" }

func (s sass) MaxLen() int {
	if sassFamily(s.sm) == 6 {
		return 8
	}
	return 16
}

func (s sass) Align() int { return s.MaxLen() }

// Decode classifies the instruction at addr. Bundles of Pascal code start
// at multiples of 32: cubins align every kernel's section so.
func (s sass) Decode(b []byte, addr uint64) Inst {
	n := s.MaxLen()
	if len(b) < n || sassFamily(s.sm) == 0 {
		return Inst{Addr: addr, Len: n, Kind: Invalid}
	}
	in := Inst{Addr: addr, Len: n}
	var reconv bool
	if n == 8 {
		if addr%32 == 0 {
			return in // the control word
		}
		in.Kind, in.Target, reconv = flowPascal(binary.LittleEndian.Uint64(b), addr)
	} else {
		in.Kind, in.Target = flowVolta(binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]), addr, sassFamily(s.sm))
	}
	if t, ok := s.calls[addr]; ok && in.Kind == IndirectCall {
		in.Kind, in.Target = Call, t
	}
	if reconv {
		// SYNC, BRK, CONT: a jump to the point set before, where known.
		t, ok := s.reconv[addr]
		switch {
		case !ok && in.Kind == CondJump:
			in.Kind = Other
		case !ok:
			in.Kind = IndirectJump
		default:
			in.Target = t
		}
	}
	return in
}

// sext is the low n bits of v as a signed number.
func sext(v uint64, n uint) int64 { return int64(v<<(64-n)) >> (64 - n) }

// Pascal opcodes (bits 52-63; SYNC is bits 48-63 0xf0f8).
const (
	p6JMX   = 0xe20
	p6JMP   = 0xe21
	p6JCAL  = 0xe22
	p6BRA   = 0xe24
	p6BRX   = 0xe25
	p6CAL   = 0xe26
	p6SSY   = 0xe29
	p6PBK   = 0xe2a
	p6PCNT  = 0xe2b
	p6EXIT  = 0xe30
	p6RET   = 0xe32
	p6KIL   = 0xe33
	p6BRK   = 0xe34
	p6CONT  = 0xe35
	p6RTT   = 0xe36
	p6BPT   = 0xe3a
	p6SYNC  = 0xf0f8
	bptTrap = 3 // BPT's mode that ends the thread
)

// flowPascal is the kind and direct target of Pascal instruction w at
// addr: the guard predicate is bits 16-19 (7 is PT, 15 !PT), branches and
// exits also test the condition code in bits 0-4 (15 is always), and a
// branch's offset is bits 20-43, signed, from the next instruction. reconv
// marks SYNC, BRK and CONT, whose target the code before them sets.
func flowPascal(w, addr uint64) (k Kind, target uint64, reconv bool) {
	pred := w >> 16 & 0xf
	if pred == 0xf {
		return Other, 0, false // @!PT: never runs
	}
	cond := pred != 7 || w&0x1f != 0xf
	rel := uint64(int64(addr) + 8 + sext(w>>20, 24))
	jump, ret := Jump, Return
	if cond {
		jump, ret = CondJump, CondReturn
	}
	if w>>48 == p6SYNC {
		return jump, 0, true
	}
	switch w >> 52 {
	case p6BRA:
		return jump, rel, false
	case p6BRK, p6CONT:
		return jump, 0, true
	case p6BRX, p6JMX, p6JMP: // through a register, or absolute (relocated)
		return IndirectJump, 0, false
	case p6CAL:
		return Call, rel, false
	case p6JCAL:
		return IndirectCall, 0, false
	case p6EXIT, p6RET, p6KIL, p6RTT:
		return ret, 0, false
	case p6BPT:
		if w>>6&7 == bptTrap {
			return Halt, 0, false
		}
	}
	return Other, 0, false
}

// pascalSets is the reconvergence point that Pascal instruction w at addr
// sets (SSY, PBK, PCNT) and the opcode of the instructions that go there.
func pascalSets(w, addr uint64) (uint64, uint64, bool) {
	rel := uint64(int64(addr) + 8 + sext(w>>20, 24))
	switch w >> 52 {
	case p6SSY:
		return rel, p6SYNC, true
	case p6PBK:
		return rel, p6BRK, true
	case p6PCNT:
		return rel, p6CONT, true
	}
	return 0, 0, false
}

// Volta-to-Hopper opcodes (bits 0-11).
const (
	v7CALLABS = 0x943
	v7CALLREL = 0x944
	v7BRA     = 0x947
	v7BRX     = 0x949
	v7JMP     = 0x94a
	v7JMX     = 0x94c
	v7EXIT    = 0x94d
	v7RTT     = 0x94f
	v7RET     = 0x950
	v7KILL    = 0x95b
	v7BPT     = 0x95c
)

// flowVolta is the kind and direct target of the 128-bit instruction
// (lo, hi) at addr of family fam (sassFamily). A branch's offset is a
// signed count of 4-byte words in bits 34-81 from the next instruction
// (bits 32-33 are modes: BRA.U sets one); Hopper's BRA adds the word
// offset's low 8 bits in bits 16-23 below them. BRA also takes a second
// predicate in bits 87-90 (7 is PT).
func flowVolta(lo, hi, addr uint64, fam int) (Kind, uint64) {
	pred := lo >> 12 & 0xf
	if pred == 0xf {
		return Other, 0 // @!PT: never runs
	}
	cond := pred != 7
	words := sext(lo>>34|hi<<30, 48)
	rel := func(words int64) uint64 { return uint64(int64(addr) + 16 + words*4) }
	switch lo & 0xfff {
	case v7BRA:
		if fam == 9 {
			words = words<<8 | int64(lo>>16&0xff)
		}
		if cond || hi>>23&0xf != 7 {
			return CondJump, rel(words)
		}
		return Jump, rel(words)
	case v7BRX, v7JMX, v7JMP:
		return IndirectJump, 0
	case v7CALLREL:
		return Call, rel(words)
	case v7CALLABS:
		return IndirectCall, 0
	case v7EXIT, v7RET, v7RTT, v7KILL:
		if cond {
			return CondReturn, 0
		}
		return Return, 0
	case v7BPT:
		if hi>>20&7 == bptTrap {
			return Halt, 0
		}
	}
	return Other, 0
}

// JumpTable gives the targets the cubin lists for an indirect branch.
func (s sass) JumpTable(_ Memory, _ []Inst, jmp Inst, to Targets) []uint64 {
	var out []uint64
	for _, t := range s.tables[jmp.Addr] {
		if to.Valid(t) {
			out = append(out, t)
		}
	}
	return out
}

// PLTSlot: cubins have no PLT.
func (sass) PLTSlot([]byte, uint64) (uint64, bool) { return 0, false }

// CUDACode is the code of a cubin BindCUDA binds a set to, with what the
// cubin says of it beyond the instructions' bits.
type CUDACode struct {
	Mem   Memory
	Procs [][2]uint64 // the procedures' extents, [lo, hi)
	// Tables are the targets of indirect branches, Calls the callees of
	// absolute calls (relocated), by the instruction's address
	// (loader.Image's IndirectTargets and CallTargets).
	Tables map[uint64][]uint64
	Calls  map[uint64]uint64
}

// BindCUDA is the SASS of generation sm bound to a cubin's code, nil when
// the generation is not decoded.
func BindCUDA(sm int, code CUDACode) Arch {
	if sassFamily(sm) == 0 {
		return nil
	}
	s := sass{sm: sm, tables: code.Tables, calls: code.Calls}
	if sassFamily(sm) == 6 {
		s.reconv = map[uint64]uint64{}
		for _, p := range code.Procs {
			pascalReconvergence(code.Mem.Bytes(p[0], p[1]), p[0], s.reconv)
		}
	}
	return s
}

// pascalReconvergence finds where the SYNC, BRK and CONT instructions of
// code (at addr) continue: at the point of the innermost SSY, PBK or
// PCNT before them whose point lies after them. Compilers nest these
// regions as the source nests its branches and loops, so the address
// order tells the one a stack would hold at run time.
//
// A PCNT is the exception: NVIDIA's SASS reference (SPA 5.0, PCNT and
// CONT) places it inside its loop, its point the loop's head, and makes
// CONT the loop's final looping branch. So a PCNT whose point is at or
// before it is open from there until its loop's last branch back, an
// unconditional CONT (or BRA) to that point: without that CONT's edge
// the loop would be none (a retry loop of a compare-and-swap).
func pascalReconvergence(code []byte, addr uint64, out map[uint64]uint64) {
	type point struct {
		at, target, op uint64
		closed         bool
	}
	var set []point
	for off := 0; off+8 <= len(code); off += 8 {
		a := addr + uint64(off)
		if a%32 == 0 {
			continue
		}
		w := binary.LittleEndian.Uint64(code[off:])
		if t, op, ok := pascalSets(w, a); ok {
			set = append(set, point{at: a, target: t, op: op})
			continue
		}
		op := w >> 52
		if w>>48 == p6SYNC {
			op = p6SYNC
		}
		always := w>>16&0xf == 7 && w&0x1f == 0xf
		if op == p6BRA && always {
			// A loop closed by a branch back to its head closes its PCNT.
			rel := uint64(int64(a) + 8 + sext(w>>20, 24))
			for i := range set {
				if set[i].op == p6CONT && set[i].target == rel && rel <= set[i].at {
					set[i].closed = true
				}
			}
		}
		if op != p6SYNC && op != p6BRK && op != p6CONT {
			continue
		}
		for i := len(set) - 1; i >= 0; i-- {
			p := &set[i]
			if p.op != op || p.closed {
				continue
			}
			if p.target > a {
				out[a] = p.target
				break
			}
			if op == p6CONT && p.target <= p.at {
				out[a] = p.target
				p.closed = always
				break
			}
		}
	}
}
