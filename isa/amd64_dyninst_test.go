package isa

import (
	"iter"
	"testing"
)

// TestDyninst12Undecodable: the VEX and EVEX instructions of glibc's
// AVX-512 string functions that Dyninst 12.3's decoder tables lack, and
// their neighbours that it decodes (libc.so.6's bytes).
func TestDyninst12Undecodable(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"vptestmb %ymm17,%ymm17,%k2 (0F38 26, 66)", []byte{0x62, 0xb2, 0x75, 0x20, 0x26, 0xd1}, true},
		{"vptestnmb %zmm0,%zmm0,%k3{%k1} (0F38 26, F3)", []byte{0x62, 0xf2, 0x7e, 0x49, 0x26, 0xd8}, false},
		{"vptestmd (0F38 27, 66)", []byte{0x62, 0xb2, 0x75, 0x20, 0x27, 0xd1}, false},
		{"vpbroadcastb %esi,%zmm16 (0F38 7A)", []byte{0x62, 0xe2, 0x7d, 0x48, 0x7a, 0xc6}, true},
		{"vpbroadcastd %esi,%zmm16 (0F38 7C)", []byte{0x62, 0xe2, 0x7d, 0x48, 0x7c, 0xc6}, false},
		{"vpbroadcastb (%rax),%zmm3 (0F38 78)", []byte{0x62, 0xf2, 0x7d, 0x48, 0x78, 0x18}, false},
		{"vmovdqu8 (%rax),%zmm4 (0F 6F, F2)", []byte{0x62, 0xf1, 0x7f, 0x48, 0x6f, 0x20}, true},
		{"vmovdqu64 (%rdi),%ymm17 (0F 6F, F3)", []byte{0x62, 0xe1, 0xfe, 0x28, 0x6f, 0x0f}, false},
		{"vmovdqa64 %ymm16,%ymm0 (0F 6F, 66)", []byte{0x62, 0xb1, 0xfd, 0x28, 0x6f, 0xc0}, false},
		{"vmovdqu8 %zmm16,(%rax){%k1} (0F 7F, F2)", []byte{0x62, 0xe1, 0x7f, 0x49, 0x7f, 0x00}, true},
		{"vmovdqu64 %zmm16,(%rdi) (0F 7F, F3)", []byte{0x62, 0xe1, 0xfe, 0x48, 0x7f, 0x07}, false},
		{"vpcmpeqb (%rdi),%ymm16,%k1 (0F3A 3F)", []byte{0x62, 0xf3, 0x7d, 0x20, 0x3f, 0x0f, 0x00}, false},
		{"vpternlogd (0F3A 25)", []byte{0x62, 0xf3, 0x65, 0x28, 0x25, 0xe2, 0xfe}, false},
		{"vpsubb (0F F8)", []byte{0x62, 0x01, 0x75, 0x20, 0xf8, 0xdd}, false},
		{"kmovq %rbx,%k1 (VEX 0F 92, F2)", []byte{0xc4, 0xe1, 0xfb, 0x92, 0xcb}, true},
		{"kmovd %ecx,%k1 (VEX2 0F 92, F2)", []byte{0xc5, 0xfb, 0x92, 0xc9}, true},
		{"kmovd %k1,%eax (VEX 0F 93, F2)", []byte{0xc5, 0xfb, 0x93, 0xc1}, false},
		{"vpcmpeqb 0x20(%rdi),%ymm0,%ymm2 (VEX 0F 74)", []byte{0xc5, 0xfd, 0x74, 0x57, 0x20}, false},
		{"vpminub (VEX 0F DA)", []byte{0xc5, 0xfd, 0xda, 0xc1}, false},
		{"vfmaddsd (VEX 0F3A 6B, AMD's FMA4: libm's __sin_fma4)", []byte{0xc4, 0xe3, 0xf9, 0x6b, 0xc2, 0x10}, false},
		{"vpdpbusd (EVEX 0F38 50: no row)", []byte{0x62, 0xf2, 0x75, 0x48, 0x50, 0xc2}, true},
		// Legacy rows of groups 7, 9 and 15 (dyninst12GroupHole).
		{"rdseed %edx (0F C7 /7: libstdc++'s __x86_rdseed)", []byte{0x0f, 0xc7, 0xfa}, true},
		{"rdseed %rdx (REX.W)", []byte{0x48, 0x0f, 0xc7, 0xfa}, true},
		{"rdrand %eax (0F C7 /6: __x86_rdrand)", []byte{0x0f, 0xc7, 0xf0}, false},
		{"rdpid %rax (F3 0F C7 /7)", []byte{0xf3, 0x0f, 0xc7, 0xf8}, true},
		{"cmpxchg16b (%rdi) (0F C7 /1)", []byte{0x48, 0x0f, 0xc7, 0x0f}, false},
		{"xsavec (%rsp) (0F C7 /4)", []byte{0x0f, 0xc7, 0x24, 0x24}, false},
		{"rdpkru (0F 01 EE: libc's pkey_get)", []byte{0x0f, 0x01, 0xee}, true},
		{"wrpkru (0F 01 EF: libc's pkey_set)", []byte{0x0f, 0x01, 0xef}, true},
		{"xgetbv (0F 01 D0, the lgdt row)", []byte{0x0f, 0x01, 0xd0}, false},
		{"rdtscp (0F 01 F9, the invlpg row)", []byte{0x0f, 0x01, 0xf9}, false},
		{"rdfsbase %rax (F3 0F AE /0 mod 11)", []byte{0xf3, 0x48, 0x0f, 0xae, 0xc0}, true},
		{"wrgsbase %rdi (F3 0F AE /3 mod 11)", []byte{0xf3, 0x48, 0x0f, 0xae, 0xdf}, true},
		{"lfence (0F AE E8)", []byte{0x0f, 0xae, 0xe8}, false},
		{"fxsave (%rsp) (0F AE /0 memory)", []byte{0x0f, 0xae, 0x04, 0x24}, false},
		{"ret", []byte{0xc3}, false},
		{"mov %rdi,%rax", []byte{0x48, 0x89, 0xf8}, false},
	} {
		if got := (amd64{}).dyninst12Undecodable(tc.b); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if in := (amd64{}).Decode(tc.b, 0); in.Kind == Invalid || in.Len != len(tc.b) {
			t.Errorf("%s: bloop decodes %+v", tc.name, in)
		}
	}
}

// TestDyninst12NoReturnSyscall: Dyninst's parser drops the fall-through of
// a syscall whose number in rax is exit (60) or rt_sigreturn (15), as in
// libc.so.6's __restore_rt and __clone's child path; exit_group (231),
// unknown numbers and a clobbered rax return.
func TestDyninst12NoReturnSyscall(t *testing.T) {
	for _, tc := range []struct {
		name string
		code []byte // instructions before the syscall, then 0f 05
		want bool
	}{
		{"mov $0xf,%rax", []byte{0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00}, true},
		{"mov $0x3c,%eax; mov %rax,%rdi", []byte{0xb8, 0x3c, 0x00, 0x00, 0x00, 0x48, 0x89, 0xc7}, true},
		{"mov $0xe7,%eax (exit_group)", []byte{0xb8, 0xe7, 0x00, 0x00, 0x00}, false},
		{"mov $0x3c,%eax; call *%rdx", []byte{0xb8, 0x3c, 0x00, 0x00, 0x00, 0xff, 0xd2}, false},
		{"mov $0x3c,%eax; add $1,%eax", []byte{0xb8, 0x3c, 0x00, 0x00, 0x00, 0x83, 0xc0, 0x01}, false},
		{"nothing known", nil, false},
	} {
		code := append(append([]byte(nil), tc.code...), 0x0f, 0x05)
		m := &memImage{code: code, codeAddr: 0x1000}
		var path []Inst
		a := uint64(0x1000)
		for a < 0x1000+uint64(len(tc.code)) {
			in := (amd64{}).Decode(m.Bytes(a, a+15), a)
			path = append(path, in)
			a = in.End()
		}
		sc := (amd64{}).Decode(m.Bytes(a, a+15), a)
		if got := (amd64{}).dyninst12NoReturnSyscall(m, backward(path), sc); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// backward yields path's instructions latest first.
func backward(path []Inst) iter.Seq[Inst] {
	return func(yield func(Inst) bool) {
		for k := len(path) - 1; k >= 0; k-- {
			if !yield(path[k]) {
				return
			}
		}
	}
}

// TestDyninst12DecodesBMI: the BMI1, BMI2 and ABM instructions of the
// bit readers of zstd and of glibc's AVX2 string functions decode in
// Dyninst 12.3, VEX.W 0 or 1, register or memory operand. Its tables give
// each a VEX entry (common/src/arch-x86.C, as stored for 2023 and later:
// sseMapBis rows F2, F5, F6 and F7 lead every implied prefix that has an
// instruction to sseMapBisMult's SSEBF2_NO (andn), SSEBF5_NO/F3/F2 (bzhi,
// pext, pdep), SSEBF6_F2 (mulx) and SSEBF7_NO/66/F3/F2 (bextr, shlx,
// sarx, shrx), whose VEX column is the instruction and EVEX column
// illegal, none through the W table; sseMapTerMult's SSETF0_F2 is rorx;
// the legacy row 0F BD has lzcnt in its F3 column, 0F B8 popcnt, and 0F
// BC has no SSE row, so tzcnt is bsf to it, of the same length). Those
// copies are later than 12.3 (they have vmovdqu8's F2 column), so live
// hpcstruct's libc.so.6 (../shared/hpcstruct-real) is the check: where
// compat mode stops at shlx (W0), tzcnt or bzhi (W0, W1), 18, 9, 5 and 1
// more of its procedures differ from the reference (176 statements of
// __strcasecmp_avx2 and its siblings leave their loops after shlx).
func TestDyninst12DecodesBMI(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"shlx %rax,%rcx,%rcx (VEX.66.0F38.W1 F7)", []byte{0xc4, 0xe2, 0xf9, 0xf7, 0xc9}},
		{"shlx %r9d,%ecx,%r8d (VEX.66.0F38.W0 F7)", []byte{0xc4, 0x62, 0x31, 0xf7, 0xc1}},
		{"shrx %rdi,(%r10,%rsi,8),%rdi (VEX.F2.0F38.W1 F7, memory)", []byte{0xc4, 0xc2, 0xc3, 0xf7, 0x3c, 0xf2}},
		{"shrx %rax,%rax,%rax (VEX.F2.0F38.W1 F7)", []byte{0xc4, 0xe2, 0xfb, 0xf7, 0xc0}},
		{"sarx %r9d,%ecx,%ecx (VEX.F3.0F38.W0 F7)", []byte{0xc4, 0xe2, 0x32, 0xf7, 0xc9}},
		{"bextr %rax,%rdx,%rax (VEX.0F38.W1 F7)", []byte{0xc4, 0xe2, 0xf8, 0xf7, 0xc2}},
		{"bzhi %rcx,%r10,%r14 (VEX.0F38.W1 F5)", []byte{0xc4, 0x42, 0xf0, 0xf5, 0xf2}},
		{"pdep %rdx,%rcx,%rax (VEX.F2.0F38.W1 F5)", []byte{0xc4, 0xe2, 0xf3, 0xf5, 0xc2}},
		{"pext %rdx,%rcx,%rax (VEX.F3.0F38.W1 F5)", []byte{0xc4, 0xe2, 0xf2, 0xf5, 0xc2}},
		{"mulx %rdx,%rax,%rax (VEX.F2.0F38.W1 F6)", []byte{0xc4, 0xe2, 0xfb, 0xf6, 0xc2}},
		{"andn %rdx,%rax,%rax (VEX.0F38.W1 F2)", []byte{0xc4, 0xe2, 0xf8, 0xf2, 0xc2}},
		{"rorx $5,%ecx,%eax (VEX.F2.0F3A.W0 F0)", []byte{0xc4, 0xe3, 0x7b, 0xf0, 0xc1, 0x05}},
		{"tzcnt %rdx,%rax (F3 0F BC)", []byte{0xf3, 0x48, 0x0f, 0xbc, 0xc2}},
		{"lzcnt %edx,%ecx (F3 0F BD)", []byte{0xf3, 0x0f, 0xbd, 0xca}},
		{"popcnt %rdx,%rax (F3 0F B8)", []byte{0xf3, 0x48, 0x0f, 0xb8, 0xc2}},
	} {
		if (amd64{}).dyninst12Undecodable(tc.b) {
			t.Errorf("%s: undecodable", tc.name)
		}
		if in := (amd64{}).Decode(tc.b, 0); in.Kind != Other || in.Len != len(tc.b) {
			t.Errorf("%s: bloop decodes %+v", tc.name, in)
		}
	}
}
