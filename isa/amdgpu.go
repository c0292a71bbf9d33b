package isa

// AMD GPUs of the GFX9 family (Vega, CDNA 1 and 2: gfx908 = MI100, gfx90a
// = MI200): instruction lengths and control flow, from AMD's "Vega" and
// "CDNA1/CDNA2 Instruction Set Architecture" reference guides (chapter
// "Microcode Formats"). An instruction is one or two little-endian
// dwords, chosen by the high bits of the first (its encoding), plus one
// dword of literal constant when a source operand field selects it (the
// value 255), and one dword of SDWA or DPP controls when a VOP1, VOP2 or
// VOPC instruction's src0 selects those (249, 250). Nothing else needs
// decoding: branches are SOPP (PC-relative, in dwords) or SOP1 (a 64-bit
// address in a register pair), and GPU code has no jump tables.

import (
	"encoding/binary"
	"slices"
)

type amdgpu struct{}

func (amdgpu) Name() string { return "amdgpu" }

// MaxLen is a two-dword encoding with its SDWA or DPP dword, or a
// one-dword encoding with its literal: GFX9 takes no literal in the
// two-dword encodings (VOP3 with src 255 does not decode).
func (amdgpu) MaxLen() int { return 8 }
func (amdgpu) Align() int  { return 4 }

// field is a bit field [lo, lo+n) of an encoding's first dword.
type field struct{ lo, n uint8 }

func (f field) of(w uint32) uint32 { return w >> f.lo & (1<<f.n - 1) }

// Source operand values that select another dword (the operand tables of
// the ISA guides): a 32-bit literal constant after the instruction, or
// the SDWA or DPP controls of a VOP1, VOP2 or VOPC instruction.
const (
	srcLiteral = 255
	srcSDWA    = 249
	srcDPP     = 250
)

// gcnFlow is how one opcode changes control flow.
type gcnFlow struct {
	kind Kind
	rel  bool // target = PC + 4 + simm16*4 (the low half of the dword)
	halt bool // kind only when simm16's bit 0 is set (s_sethalt 1), else Other
}

// gcnFormat is one encoding of the first dword, as the ISA guides'
// microcode formats draw it.
type gcnFormat struct {
	name        string
	mask, match uint32
	dwords      int     // without literal or SDWA/DPP
	lit         []field // source fields where srcLiteral selects a literal
	ext         bool    // src0 (the lit field) may select SDWA or DPP
	op          field
	litOps      []uint32           // opcodes that always carry a literal
	notSrc      map[uint32][]field // per opcode, the fields of lit that hold no source operand
	flow        map[uint32]gcnFlow
}

// Fields shared by several formats.
var (
	sSrc0 = field{0, 8}
	sSrc1 = field{8, 8}
	vSrc0 = field{0, 9}
)

// gcnFormats are GFX9's encodings, most specific first: SOP1, SOPC and
// SOPP are carved out of SOPK's space, which is carved out of SOP2's, and
// VOP1 and VOPC out of VOP2's.
var gcnFormats = []gcnFormat{
	{name: "SOP1", mask: 0xff800000, match: 0xbe800000, dwords: 1, lit: []field{sSrc0}, op: field{8, 8},
		notSrc: map[uint32][]field{28: {sSrc0}}, // s_getpc_b64 reads no operand
		flow: map[uint32]gcnFlow{
			29: {kind: IndirectJump}, // s_setpc_b64: a return in a callee (to s[30:31]), else a jump
			30: {kind: IndirectCall}, // s_swappc_b64
			31: {kind: Return},       // s_rfe_b64: back from the trap handler
			46: {kind: CondReturn},   // s_cbranch_join: to the branch stack's address, or on
		}},
	{name: "SOPC", mask: 0xff800000, match: 0xbf000000, dwords: 1, lit: []field{sSrc0, sSrc1}, op: field{16, 7},
		notSrc: map[uint32][]field{17: {sSrc1}}}, // s_set_gpr_idx_on: ssrc1 is its mode bits
	{name: "SOPP", mask: 0xff800000, match: 0xbf800000, dwords: 1, op: field{16, 7},
		flow: map[uint32]gcnFlow{
			1:  {kind: Return},              // s_endpgm: the kernel's end
			2:  {kind: Jump, rel: true},     // s_branch
			4:  {kind: CondJump, rel: true}, // s_cbranch_scc0
			5:  {kind: CondJump, rel: true}, // s_cbranch_scc1
			6:  {kind: CondJump, rel: true}, // s_cbranch_vccz
			7:  {kind: CondJump, rel: true}, // s_cbranch_vccnz
			8:  {kind: CondJump, rel: true}, // s_cbranch_execz
			9:  {kind: CondJump, rel: true}, // s_cbranch_execnz
			13: {kind: Halt, halt: true},    // s_sethalt 1 stops the wave
			18: {kind: Halt},                // s_trap: to the trap handler (llvm.trap's, which ends the wave)
			23: {kind: CondJump, rel: true}, // s_cbranch_cdbgsys
			24: {kind: CondJump, rel: true}, // s_cbranch_cdbguser
			25: {kind: CondJump, rel: true}, // s_cbranch_cdbgsys_or_user
			26: {kind: CondJump, rel: true}, // s_cbranch_cdbgsys_and_user
			27: {kind: Return},              // s_endpgm_saved
			30: {kind: Return},              // s_endpgm_ordered_ps_done
		}},
	{name: "SOPK", mask: 0xf0000000, match: 0xb0000000, dwords: 1, op: field{23, 5},
		litOps: []uint32{20}, // s_setreg_imm32_b32
		flow: map[uint32]gcnFlow{
			16: {kind: CondJump, rel: true}, // s_cbranch_i_fork
			21: {kind: Call, rel: true},     // s_call_b64
		}},
	{name: "SOP2", mask: 0xc0000000, match: 0x80000000, dwords: 1, lit: []field{sSrc0, sSrc1}, op: field{23, 7},
		flow: map[uint32]gcnFlow{
			41: {kind: CondReturn}, // s_cbranch_g_fork: to a register's address, or on
			43: {kind: Return},     // s_rfe_restore_b64: back from the trap handler
		}},
	{name: "SMEM", mask: 0xfc000000, match: 0xc0000000, dwords: 2},
	{name: "EXP", mask: 0xfc000000, match: 0xc4000000, dwords: 2},
	{name: "VOP3", mask: 0xfc000000, match: 0xd0000000, dwords: 2}, // VOP3A, VOP3B, VOP3P, MAI
	{name: "VINTRP", mask: 0xfc000000, match: 0xd4000000, dwords: 1},
	{name: "DS", mask: 0xfc000000, match: 0xd8000000, dwords: 2},
	{name: "FLAT", mask: 0xfc000000, match: 0xdc000000, dwords: 2}, // FLAT, GLOBAL, SCRATCH
	{name: "MUBUF", mask: 0xfc000000, match: 0xe0000000, dwords: 2},
	{name: "MTBUF", mask: 0xfc000000, match: 0xe8000000, dwords: 2},
	{name: "MIMG", mask: 0xfc000000, match: 0xf0000000, dwords: 2},
	{name: "VOP1", mask: 0xfe000000, match: 0x7e000000, dwords: 1, lit: []field{vSrc0}, ext: true, op: field{9, 8},
		notSrc: map[uint32][]field{0: {vSrc0}, 53: {vSrc0}}}, // v_nop, v_clrexcp
	{name: "VOPC", mask: 0xfe000000, match: 0x7c000000, dwords: 1, lit: []field{vSrc0}, ext: true},
	{name: "VOP2", mask: 0x80000000, match: 0, dwords: 1, lit: []field{vSrc0}, ext: true, op: field{25, 6},
		litOps: []uint32{23, 24, 36, 37}}, // v_madmk_f32, v_madak_f32, v_madmk_f16, v_madak_f16: constant K
}

// gcnFormatOf is the encoding of first dword w, or nil for the encodings
// GFX9 leaves unassigned.
func gcnFormatOf(w uint32) *gcnFormat {
	for i := range gcnFormats {
		if f := &gcnFormats[i]; w&f.mask == f.match {
			return f
		}
	}
	return nil
}

// length is the instruction's size in bytes given its first dword.
func (f *gcnFormat) length(w uint32) int {
	n := f.dwords
	op := f.op.of(w)
	switch {
	case slices.Contains(f.litOps, op):
		n++
	case f.ext && (vSrc0.of(w) == srcSDWA || vSrc0.of(w) == srcDPP):
		n++
	default:
		for _, l := range f.lit {
			if l.of(w) == srcLiteral && !slices.Contains(f.notSrc[op], l) {
				n++ // one literal, however many operands select it
				break
			}
		}
	}
	return 4 * n
}

// Decode classifies the instruction at addr.
func (amdgpu) Decode(b []byte, addr uint64) Inst {
	bad := Inst{Addr: addr, Len: 4, Kind: Invalid}
	if len(b) < 4 {
		return bad
	}
	w := binary.LittleEndian.Uint32(b)
	f := gcnFormatOf(w)
	if f == nil {
		return bad
	}
	in := Inst{Addr: addr, Len: f.length(w)}
	if len(b) < in.Len {
		return bad // cut short: the dwords it needs are not there
	}
	fl, ok := f.flow[f.op.of(w)]
	switch {
	case !ok, fl.halt && w&1 == 0:
		return in
	case fl.rel:
		in.Target = addr + 4 + uint64(int64(int16(w))*4)
	}
	in.Kind = fl.kind
	return in
}

// JumpTable: GFX9 code has none (switches are compare-and-branch trees;
// s_setpc_b64 returns or calls through a register pair).
func (amdgpu) JumpTable(Memory, []Inst, Inst, Targets) []uint64 { return nil }

// PLTSlot: code objects have no PLT (calls go through s_getpc_b64-relative
// addresses or the GOT, never a stub).
func (amdgpu) PLTSlot([]byte, uint64) (uint64, bool) { return 0, false }
