package isa

// ppc64le PLT call stubs. ELFv2 has no executable .plt: the linker puts a
// call stub for each imported function in .text (or .init, for the calls
// _init makes), often without a symbol; .plt is data, one slot per
// function, named by the slot's R_PPC64_JMP_SLOT relocation. A stub loads
// its slot into CTR and jumps:
//
//	std r2,24(r1)           save the caller's TOC pointer (optional)
//	ld r12,off(r2)          slot = TOC + off
//	or addis r12,r2,hi ; ld r12,lo(r12)   slot = TOC + hi<<16 + lo
//	or pld r12,off(0),1     Power10: slot = the pld's address + off
//	mtctr r12
//	bctr

import "golang.org/x/arch/ppc64/ppc64asm"

const (
	wordSaveTOC = 0xf8410018 // std r2,24(r1)
	wordMtctr12 = 0x7d8903a6 // mtctr r12
	wordBctr    = 0x4e800420 // bctr
)

// PLTSlot returns the .plt slot the call stub at addr (bytes b) jumps
// through. The TOC-relative forms need the TOC base (WithTOC).
func (p ppc64le) PLTSlot(b []byte, addr uint64) (uint64, bool) {
	slot, n, ok := p.stubLoad(b, addr)
	if !ok || len(b) < n+8 || le32(b[n:]) != wordMtctr12 || le32(b[n+4:]) != wordBctr {
		return 0, false
	}
	return slot, true
}

// stubLoad reads the stub's load of r12 from its slot: the slot and the
// offset in b after the load.
func (p ppc64le) stubLoad(b []byte, addr uint64) (slot uint64, n int, ok bool) {
	if len(b) >= 4 && le32(b) == wordSaveTOC {
		n = 4
	}
	if len(b) < n+4 {
		return 0, 0, false
	}
	if op := le32(b[n:]) >> 26; op != 58 && op != 15 && op != 1 {
		return 0, 0, false // not ld, addis or a prefix: loaders scan all code with this
	}
	x, ok := decodePPC(b[n:])
	if !ok {
		return 0, 0, false
	}
	switch {
	case x.Op == ppc64asm.PLD && isReg(x.Args[0], ppc64asm.R12) && isReg(x.Args[2], ppc64asm.R0) && x.Args[3] == ppc64asm.Imm(1):
		return addr + uint64(n) + uint64(int64(x.Args[1].(ppc64asm.Offset))), n + 8, true
	case p.toc == 0:
		return 0, 0, false
	case x.Op == ppc64asm.LD && isReg(x.Args[0], ppc64asm.R12) && isReg(x.Args[2], ppc64asm.R2):
		return p.toc + uint64(int64(x.Args[1].(ppc64asm.Offset))), n + 4, true
	case x.Op == ppc64asm.ADDIS && isReg(x.Args[0], ppc64asm.R12) && isReg(x.Args[1], ppc64asm.R2):
		hi := int64(x.Args[2].(ppc64asm.Imm)) << 16
		y, ok := decodePPC(b[n+4:])
		if !ok || y.Op != ppc64asm.LD || !isReg(y.Args[0], ppc64asm.R12) || !isReg(y.Args[2], ppc64asm.R12) {
			return 0, 0, false
		}
		return p.toc + uint64(hi+int64(y.Args[1].(ppc64asm.Offset))), n + 8, true
	}
	return 0, 0, false
}

func isReg(a ppc64asm.Arg, r ppc64asm.Reg) bool {
	x, ok := a.(ppc64asm.Reg)
	return ok && x == r
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// maxStubInsts bounds the walk from a stub's entry to its bctr.
const maxStubInsts = 8

// CodeStubs finds the PLT call stubs in one code section, each from its
// entry to its bctr, by PLTSlot's shape (isa.StubFinder).
func (p ppc64le) CodeStubs(mem Memory, code []byte, addr uint64, want func(slot uint64) bool) []Stub {
	var out []Stub
	end := addr + uint64(len(code))
	for off := uint64(0); off+12 <= uint64(len(code)); off += 4 {
		a := addr + off
		slot, ok := p.PLTSlot(code[off:], a)
		if !ok || !want(slot) {
			continue
		}
		e := a
		for k := 0; k < maxStubInsts; k++ {
			in := p.Decode(mem.Bytes(e, end), e)
			e = in.End()
			if in.Kind == IndirectJump || in.Kind == Invalid {
				break
			}
		}
		out = append(out, Stub{Addr: a, End: e, Slot: slot})
		off = e - addr - 4
	}
	return out
}

// tocOffset is where the linker puts the TOC base after the start of
// .got, so that 16-bit offsets from r2 reach 64 KiB of it.
const tocOffset = 0x8000

// TOCFromGOT is .got + 0x8000, as the linker sets r2 (isa.SymbolABI).
func (ppc64le) TOCFromGOT(got uint64) uint64 { return got + tocOffset }

// TOCSymbol is .TOC., the TOC base the linker defines.
func (ppc64le) TOCSymbol() string { return ".TOC." }

// LocalEntry is the local entry of an ELFv2 function symbol: st_other
// bits 5-7 give its offset from the global entry (isa.SymbolABI).
func (ppc64le) LocalEntry(value uint64, other uint8) uint64 {
	v := other >> 5 & 7
	if v < 2 || v == 7 {
		return 0 // no local entry (7 is reserved)
	}
	return value + uint64(1)<<v>>2<<2
}
