package isa

import (
	"debug/elf"
	"encoding/binary"
	"testing"
)

// sassCase is one instruction as a cubin of ../shared holds it: lo (and
// hi, the upper 64 bits of a 128-bit instruction) at addr, what nvdisasm
// would print for it by our reading, and the kind and target it must
// decode to. Targets were checked against the cubins: loop headers are
// those of hpcstruct --gpucfg's structure files (L v), exits the first
// instruction of the source line after the loop.
type sassCase struct {
	sm     int
	addr   uint64
	lo, hi uint64
	asm    string
	kind   Kind
	target uint64
}

var sassCases = []sassCase{
	// sm_62, inlines+loops-sm_62-nvcc102-0, f3_1 at 0x144e0 (L v=0x14520)
	{62, 0x144e0, 0x007fbc03fde01fef, 0, "control word", Other, 0},
	{62, 0x14608, 0xe24000001000000f, 0, "@P0 BRA 0x14710 (the loop's exit)", CondJump, 0x14710},
	{62, 0x14610, 0xe24000000007000f, 0, "BRA 0x14618 (the next one)", Jump, 0x14618},
	{62, 0x146c8, 0xe220000000000040, 0, "JCAL vprintf (relocated)", IndirectCall, 0},
	{62, 0x146f8, 0xe2400fffe207000f, 0, "BRA 0x14520 (back to the header's bundle)", Jump, 0x14520},
	{62, 0x14730, 0xe30000000007000f, 0, "EXIT", Return, 0},
	{62, 0x14770, 0xe2400fffff87000f, 0, "BRA 0x14770 (itself)", Jump, 0x14770},
	{62, 0x14778, 0x50b0000000070f00, 0, "NOP", Other, 0},
	// f4_2: SSY and a SYNC whose point BindCUDA knows (unbound here)
	{62, 0x14c90, 0xe29000001e800000, 0, "SSY 0x14e80", Other, 0},
	{62, 0x14d78, 0xf0f800000000000f, 0, "@P0 SYNC (point unknown: falls through)", Other, 0},
	{62, 0x14d88, 0xf0f800000007000f, 0, "SYNC (point unknown)", IndirectJump, 0},
	// cudaGetDevice, cudaFuncGetAttributes
	{62, 0x134f8, 0xe32000000007000f, 0, "RET", Return, 0},
	{62, 0x13b08, 0xe24000000080000f, 0, "@P0 BRA 0x13b18 (over the trap)", CondJump, 0x13b18},
	{62, 0x13b10, 0xe3a00000001000c0, 0, "BPT.TRAP 0x1", Halt, 0},
	// inlines+loops-sm_62-nvcc102-dr, f4_2 (L v=0x3670)
	{62, 0x3618, 0xe24000001008000f, 0, "@!P0 BRA 0x3720", CondJump, 0x3720},
	{62, 0x36d8, 0xe2400ffff908000f, 0, "@!P0 BRA 0x3670 (the inner loop)", CondJump, 0x3670},
	// Built from the fields above: a predicate that is never true, a
	// condition code other than T, the other Pascal branches.
	{62, 0x1008, 0xe2400000000f000f, 0, "@!PT BRA (never)", Other, 0},
	{62, 0x1008, 0xe240000000070002, 0, "BRA CC.EQ 0x1010", CondJump, 0x1010},
	{62, 0x1008, 0xe26000001000000f, 0, "CAL 0x1110", Call, 0x1110},
	{62, 0x1008, 0xe25000000007000f, 0, "BRX R0", IndirectJump, 0},
	{62, 0x1008, 0xe30000000000000f, 0, "@P0 EXIT", CondReturn, 0},

	// sm_75, inlines+loops-sm_75-nvcc112-0, f3_1 at 0x12f80 (L v=0x12ff0)
	{75, 0x130e0, 0x000001c000000947, 0x003fde0003800000, "@P0 BRA 0x132b0 (the loop's exit)", CondJump, 0x132b0},
	{75, 0x130f0, 0x0000000000007947, 0x003fde0003800000, "BRA 0x13100 (the next one)", Jump, 0x13100},
	{75, 0x13220, 0x0000000000007943, 0x003fde0003c00000, "CALL.ABS.NOINC vprintf (relocated)", IndirectCall, 0},
	{75, 0x13280, 0x0000000000007946, 0x003fde0003800000, "YIELD", Other, 0},
	{75, 0x13290, 0xfffffd5000007947, 0x003fde000383ffff, "BRA 0x12ff0 (back to the header)", Jump, 0x12ff0},
	{75, 0x132d0, 0x000000000000794d, 0x003fde0003800000, "EXIT", Return, 0},
	{75, 0x132e0, 0x0000000000007918, 0x003fde0000000000, "NOP", Other, 0},
	{75, 0x132f0, 0xfffffff000007947, 0x000fc0000383ffff, "BRA 0x132f0 (itself)", Jump, 0x132f0},
	{75, 0x11e40, 0x000000040000795c, 0x003fde0000300000, "BPT.TRAP 0x1", Halt, 0},
	{75, 0x120c0, 0x0000000014007950, 0x003fde0003e00000, "RET.REL.NODEC R20", Return, 0},
	{75, 0x13e00, 0x000002e000067945, 0x003fde0003800000, "BSSY B6, 0x140f0 (reconvergence: no edge)", Other, 0},
	{75, 0x13e10, 0x0000000000067941, 0x003fde0003800000, "BSYNC B6", Other, 0},
	// recursion-sm_75-nvcc112-dr: kernmain calls heart (C t=0x3260)
	{75, 0x2db0, 0x000004a000007944, 0x000fea0003c00000, "CALL.REL.NOINC 0x3260", Call, 0x3260},
	{75, 0x33f0, 0xfffff9d000007944, 0x000fea000383ffff, "CALL.REL.NOINC 0x2dd0", Call, 0x2dd0},

	// sm_70, quicksilver-sm_70-dr
	{70, 0x44e50, 0xfffff22004007949, 0x000fea000383ffff, "BRX R4 -0xdf0 (targets in .nv.info)", IndirectJump, 0},
	{70, 0x4a850, 0xfffff05100008947, 0x000fea000383ffff, "@!P0 BRA.U 0x498b0 (a mode bit below the offset)", CondJump, 0x498b0},
	{70, 0x4c250, 0x0000000000000942, 0x000fe20003800000, "@P0 BREAK B0", Other, 0},
	{70, 0x5aa60, 0x000000000000094d, 0x000fea0003800000, "@P0 EXIT", CondReturn, 0},
	{70, 0x1000, 0x000000000000f94d, 0x000fea0003800000, "@!PT EXIT (never)", Other, 0},
	{70, 0x1000, 0x0000001000007947, 0x000fea0003000000, "BRA !P6, 0x1020 (second predicate)", CondJump, 0x1020},

	// sm_87, inlines+loops-sm_87-nvcc118-0, f1
	{87, 0xa790, 0x0000012000000947, 0x000fea0003800000, "@P0 BRA 0xa8c0", CondJump, 0xa8c0},
	{87, 0xa7a0, 0xffffffff00007956, 0x000fe80000000000, "WARPSYNC 0xffffffff", Other, 0},
	{87, 0xaa60, 0xfffffff000007947, 0x000fc0000383ffff, "BRA 0xaa60 (itself)", Jump, 0xaa60},

	// sm_90a, inlines+loops-sm_90a-nvcc120-r f3_1 at 0x2900 and -0 f3_1
	// at 0xa600: Hopper's BRA keeps the low 8 bits of its word offset in
	// bits 16-23.
	{90, 0x2980, 0x000000000000894d, 0x000fea0003800000, "@!P0 EXIT", CondReturn, 0},
	{90, 0x2aa0, 0xfffffffc00c48947, 0x000fea000383ffff, "@!P0 BRA 0x29c0 (back to the header)", CondJump, 0x29c0},
	{90, 0x2ac0, 0xfffffffc00fc7947, 0x000fc0000383ffff, "BRA 0x2ac0 (itself)", Jump, 0x2ac0},
	{90, 0xa7a0, 0x0000000000680947, 0x003fde0003800000, "@P0 BRA 0xa950 (the loop's exit)", CondJump, 0xa950},
	{90, 0xa940, 0xfffffffc004c7947, 0x003fde000383ffff, "BRA 0xa680 (back to the header)", Jump, 0xa680},
	{90, 0xac90, 0x000002f000067945, 0x003fde0003800000, "BSSY B6", Other, 0},
}

// sassBytes lays an instruction out as the cubin holds it.
func sassBytes(sm int, lo, hi uint64) []byte {
	b := binary.LittleEndian.AppendUint64(nil, lo)
	if sm >= 70 {
		b = binary.LittleEndian.AppendUint64(b, hi)
	}
	return b
}

func TestDecodeSASS(t *testing.T) {
	for _, tc := range sassCases {
		a := ForGeneration(elf.EM_CUDA, tc.sm)
		if a == nil {
			t.Fatalf("sm_%d: no decoder", tc.sm)
		}
		b := sassBytes(tc.sm, tc.lo, tc.hi)
		in := a.Decode(b, tc.addr)
		if in.Kind != tc.kind || in.Target != tc.target || in.Len != len(b) || in.Addr != tc.addr {
			t.Errorf("sm_%d %#x %s (%016x %016x): kind %d target %#x len %d, want kind %d target %#x len %d",
				tc.sm, tc.addr, tc.asm, tc.hi, tc.lo, in.Kind, in.Target, in.Len, tc.kind, tc.target, len(b))
		}
		if short := a.Decode(b[:len(b)-1], tc.addr); short.Kind != Invalid || short.Len != len(b) {
			t.Errorf("sm_%d %s cut short: kind %d len %d, want Invalid, %d", tc.sm, tc.asm, short.Kind, short.Len, len(b))
		}
	}
}

// TestSASSGenerations: EM_CUDA names no decoder without a generation, and
// only the generations whose encoding is known have one.
func TestSASSGenerations(t *testing.T) {
	if For(elf.EM_CUDA) != nil {
		t.Error("For(EM_CUDA) gives a decoder: the SM number is needed")
	}
	for sm, want := range map[int]int{50: 0, 53: 0, 60: 8, 61: 8, 62: 8, 70: 16, 72: 16, 75: 16, 80: 16, 86: 16, 87: 16, 89: 16, 90: 16, 100: 0, 0: 0} {
		a := ForGeneration(elf.EM_CUDA, sm)
		switch {
		case want == 0 && a != nil:
			t.Errorf("sm_%d: decoder %s, want none", sm, a.Name())
		case want != 0 && (a == nil || a.MaxLen() != want || a.Align() != want):
			t.Errorf("sm_%d: %v, want %d-byte instructions", sm, a, want)
		}
	}
	if ForGeneration(elf.EM_X86_64, 75) != For(elf.EM_X86_64) {
		t.Error("ForGeneration of a machine without generations is not For")
	}
	if BindCUDA(53, CUDACode{}) != nil {
		t.Error("BindCUDA(53) gives a decoder")
	}
}

// TestSASSBound: bound to its code, Pascal's SYNC, BRK and CONT go to the
// point of the innermost SSY, PBK or PCNT before them; indirect branches
// and absolute calls take what the cubin lists.
func TestSASSBound(t *testing.T) {
	const base = 0x1000
	sets := func(op uint64, at, to uint64) uint64 { return op<<52 | uint64(to-at-8)&0xffffff<<20 }
	code := []uint64{
		0x001fbc00fde007ef,           // 0x1000 control
		sets(p6PBK, 0x1008, 0x1060),  // 0x1008 PBK 0x1060
		sets(p6SSY, 0x1010, 0x1048),  // 0x1010 SSY 0x1048
		sets(p6PCNT, 0x1018, 0x1040), // 0x1018 PCNT 0x1040
		0x001fbc00fde007ef,           // 0x1020 control
		0xf0f800000000000f,           // 0x1028 @P0 SYNC -> 0x1048
		p6BRK<<52 | 7<<16 | 0xf,      // 0x1030 BRK -> 0x1060
		p6CONT<<52 | 7<<16 | 0xf,     // 0x1038 CONT -> 0x1040
		0x001fbc00fde007ef,           // 0x1040 control
		0xf0f800000007000f,           // 0x1048 SYNC: no point after it
		0xe25000000007000f,           // 0x1050 BRX
		0xe220000000000040,           // 0x1058 JCAL
	}
	var b []byte
	for _, w := range code {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	mem := &memImage{code: b, codeAddr: base}
	a := BindCUDA(62, CUDACode{Mem: mem, Procs: [][2]uint64{{base, base + uint64(len(b))}},
		Tables: map[uint64][]uint64{0x1050: {0x1020, 0x1028, 0x9000}}, Calls: map[uint64]uint64{0x1058: 0x2000}})
	for _, tc := range []struct {
		addr   uint64
		kind   Kind
		target uint64
	}{
		{0x1028, CondJump, 0x1048}, {0x1030, Jump, 0x1060}, {0x1038, Jump, 0x1040},
		{0x1048, IndirectJump, 0}, {0x1050, IndirectJump, 0}, {0x1058, Call, 0x2000},
	} {
		in := a.Decode(mem.Bytes(tc.addr, base+uint64(len(b))), tc.addr)
		if in.Kind != tc.kind || in.Target != tc.target {
			t.Errorf("%#x: kind %d target %#x, want %d %#x", tc.addr, in.Kind, in.Target, tc.kind, tc.target)
		}
	}
	jmp := a.Decode(mem.Bytes(0x1050, 0x1058), 0x1050)
	to := Targets{Valid: func(x uint64) bool { return x >= base && x < base+uint64(len(b)) }}
	if got := a.JumpTable(mem, nil, jmp, to); len(got) != 2 || got[0] != 0x1020 || got[1] != 0x1028 {
		t.Errorf("BRX targets %#x, want the two inside the procedure", got)
	}
}
