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
