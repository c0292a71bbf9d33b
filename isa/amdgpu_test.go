package isa

import (
	"bloop/internal/testenv"
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// dwords is the little-endian bytes of the dwords ws.
func dwords(ws ...uint32) []byte {
	var b []byte
	for _, w := range ws {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

// TestDecodeAMDGPU: instructions of the gfx90a code objects (as
// llvm-objdump prints them) and hand-made ones for the encodings compiled
// code rarely holds.
func TestDecodeAMDGPU(t *testing.T) {
	const pc = 0x1c58
	cases := []struct {
		what   string
		code   []byte
		len    int
		kind   Kind
		target uint64
	}{
		{"s_cbranch_execz 105", dwords(0xbf880069), 4, CondJump, pc + 4 + 105*4},
		{"s_cbranch_scc0 65532 (back 4 dwords)", dwords(0xbf84fffc), 4, CondJump, pc + 4 - 16},
		{"s_branch 1", dwords(0xbf820001), 4, Jump, pc + 8},
		{"s_endpgm", dwords(0xbf810000), 4, Return, 0},
		{"s_nop 0", dwords(0xbf800000), 4, Other, 0},
		{"s_trap 2", dwords(0xbf920002), 4, Halt, 0},
		{"s_sethalt 1", dwords(0xbf8d0001), 4, Halt, 0},
		{"s_sethalt 0", dwords(0xbf8d0000), 4, Other, 0},
		{"s_setpc_b64 s[30:31]", dwords(0xbe801d1e), 4, IndirectJump, 0},
		{"s_swappc_b64 s[30:31], s[16:17]", dwords(0xbe9e1e10), 4, IndirectCall, 0},
		{"s_getpc_b64 s[16:17] (ssrc0 bits unread)", dwords(0xbe901cff), 4, Other, 0},
		{"s_set_gpr_idx_on s52, 0xff (ssrc1: mode bits)", dwords(0xbf11ff34), 4, Other, 0},
		{"s_set_gpr_idx_on literal, 5", dwords(0xbf1105ff, 0x44), 8, Other, 0},
		{"v_nop (src0 bits unread)", dwords(0x7e0000ff), 4, Other, 0},
		{"s_call_b64 s[30:31], 2", dwords(0xba9e0002), 4, Call, pc + 12},
		{"s_cbranch_i_fork s[16:17], -1", dwords(0xb810ffff), 4, CondJump, pc},
		{"s_cbranch_g_fork s[16:17], s[2:3]", dwords(0x94800210), 4, CondReturn, 0},
		{"s_cbranch_join s16", dwords(0xbe802e10), 4, CondReturn, 0},
		{"s_rfe_b64 s[16:17]", dwords(0xbe801f10), 4, Return, 0},
		{"s_mov_b32 s0, 0x92492493", dwords(0xbe8000ff, 0x92492493), 8, Other, 0},
		{"s_add_u32 s16, s16, literal (ssrc1)", dwords(0x8010ff10, 0x4), 8, Other, 0},
		{"s_cmp_eq_u32 literal, s0 (SOPC)", dwords(0xbf0600ff, 0x1234), 8, Other, 0},
		{"s_setreg_imm32_b32", dwords(0xba003412, 0xb9003412), 8, Other, 0},
		{"s_movk_i32 (SOPK, simm16 255)", dwords(0xb00000ff), 4, Other, 0},
		{"v_add_u32_e32 v0, v0, v2", dwords(0x68000500), 4, Other, 0},
		{"v_madmk_f32 v1, s1, 0x3f800000, v1", dwords(0x2e020201, 0x3f800000), 8, Other, 0},
		{"v_mov_b32_sdwa", dwords(0x7e0202f9, 0x00060600), 8, Other, 0},
		{"v_mov_b32_dpp", dwords(0x7e0202fa, 0xff000100), 8, Other, 0},
		{"v_cmp_lt_i32_e32 vcc, 6, v2 (VOPC)", dwords(0x7d820486), 4, Other, 0},
		{"v_cmp with a literal", dwords(0x7d8204ff, 7), 8, Other, 0},
		{"v_lshl_add_u32 (VOP3)", dwords(0xd1fd0002, 0x04010c06), 8, Other, 0},
		{"s_load_dwordx4 (SMEM)", dwords(0xc00a0202, 0x00000010), 8, Other, 0},
		{"global_load_dword (FLAT)", dwords(0xdc508000, 0x0e7f0004), 8, Other, 0},
		{"ds_write_b32", dwords(0xd81a0000, 0x00000100), 8, Other, 0},
		{"buffer_load_dword (MUBUF)", dwords(0xe0501000, 0x80000000), 8, Other, 0},
		{"unassigned encoding 111111", dwords(0xfc000000, 0), 4, Invalid, 0},
		{"two-dword encoding cut short", dwords(0xc00a0202), 4, Invalid, 0},
		{"literal cut short", dwords(0xbe8000ff), 4, Invalid, 0},
		{"three bytes", []byte{0, 0, 0x80}, 4, Invalid, 0},
	}
	a := For(elf.EM_AMDGPU)
	if a == nil || a.Name() != "amdgpu" {
		t.Fatalf("For(EM_AMDGPU) = %v", a)
	}
	for _, c := range cases {
		in := a.Decode(c.code, pc)
		if in.Len != c.len || in.Kind != c.kind || in.Target != c.target || in.Addr != pc {
			t.Errorf("%s: % x: %+v, want len %d kind %d target %#x", c.what, c.code, in, c.len, c.kind, c.target)
		}
	}
}

// mcEncoding matches llvm-mc's "s_nop 0 ; encoding: [0x00,0x00,0x80,0xbf]".
var mcEncoding = regexp.MustCompile(`^\s+(\S+)\s*(.*?)\s*; encoding: \[([0-9a-fx,]+)\]$`)

// A sample is its first dword and two random ones, then s_nop 0 three
// times, so that whatever llvm-mc reads from the random dwords ends before
// the sample's marker, s_movk_i32 s0 with the sample's index (as
// s_nop 0, a SOPP and SOPK dword: no random dword runs into them).
const slotMarker = 0xb0000000

// amdgpuSamples (fewer than 65536) are n first dwords per GFX9 encoding, random but for the
// bits that select it, with the fields that select a literal, SDWA or
// DPP set to those values half of the time, and n entirely random ones.
func amdgpuSamples(n int) [][]byte {
	r := rand.New(rand.NewPCG(25, 908))
	var out [][]byte
	add := func(w uint32) {
		// Second dwords of few bits set decode more often: llvm-mc
		// rejects unused operand fields that are not zero.
		w1 := r.Uint32() & []uint32{0, 0xff, 0x1ff, 0xffffffff}[r.IntN(4)]
		out = append(out, dwords(w, w1, r.Uint32(), 0xbf800000, 0xbf800000, 0xbf800000, slotMarker|uint32(len(out))))
	}
	for _, f := range gcnFormats {
		for i := 0; i < n; i++ {
			w := f.match | r.Uint32()&^f.mask
			if len(f.lit) > 0 && r.IntN(2) == 0 {
				l := f.lit[r.IntN(len(f.lit))]
				v := uint32(srcLiteral)
				if f.ext && r.IntN(2) == 0 {
					v = []uint32{srcSDWA, srcDPP}[r.IntN(2)]
				}
				w = w&^((1<<l.n-1)<<l.lo) | v<<l.lo
			}
			add(w)
		}
	}
	for i := 0; i < n; i++ {
		add(r.Uint32())
	}
	return out
}

// llvmMC disassembles the samples with llvm-mc for mcpu and returns, per
// sample, the length and text of the instruction at its first byte (0
// and "" where llvm-mc finds no valid instruction there). llvm-mc 14
// crashes on a few SDWA words: a batch it crashes on is split until the
// samples to blame are found, which are left out (crashed counts them).
func llvmMC(t *testing.T, mcpu string, samples [][]byte) (lens []int, texts []string, crashed int) {
	tool := testenv.Need(t, "llvm-mc")
	lens, texts = make([]int, len(samples)), make([]string, len(samples))
	var run func(lo, hi int)
	run = func(lo, hi int) {
		out, err := mcBatch(tool, mcpu, samples[lo:hi])
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && hi-lo > 1:
			mid := (lo + hi) / 2
			run(lo, mid)
			run(mid, hi)
			return
		case errors.As(err, &exit):
			crashed++
			return
		case err != nil:
			t.Fatalf("llvm-mc: %v", err)
		}
		readMC(out, samples, lo, hi, lens, texts)
	}
	for lo := 0; lo < len(samples); lo += 250 {
		run(lo, min(lo+250, len(samples)))
	}
	return lens, texts, crashed
}

// mcBatch is llvm-mc's disassembly (stdout only) of samples, one a line.
func mcBatch(tool, mcpu string, samples [][]byte) ([]byte, error) {
	var in bytes.Buffer
	for _, s := range samples {
		for i, c := range s {
			if i > 0 {
				in.WriteByte(',')
			}
			fmt.Fprintf(&in, "0x%02x", c)
		}
		in.WriteByte('\n')
	}
	cmd := exec.Command(tool, "-arch=amdgcn", "-mcpu="+mcpu, "--disassemble", "--show-encoding")
	cmd.Stdin = &in
	// A crash's stack dump is not read: do not spend seconds symbolizing it.
	cmd.Env = append(os.Environ(), "LLVM_DISABLE_SYMBOLIZATION=1")
	return cmd.Output()
}

// readMC reads llvm-mc's instructions back onto the samples. Where bytes
// do not decode it goes on past them, how far depending on the bytes, and
// its warnings, on stderr, are not in order with stdout, so each sample
// ends with a marker (slotMarker) that says which sample comes next: the
// first instruction after it is that sample's when it holds the sample's
// first bytes. The output is that of samples[lo:hi].
func readMC(out []byte, samples [][]byte, lo, hi int, lens []int, texts []string) {
	next, first := lo, true
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := mcEncoding.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var enc []byte
		for _, x := range strings.Split(m[3], ",") {
			v, _ := strconv.ParseUint(x, 0, 8)
			enc = append(enc, byte(v))
		}
		if first && next < hi && bytes.HasPrefix(samples[next], enc) {
			lens[next], texts[next] = len(enc), m[1]+" "+m[2]
		}
		first = false
		// A marker of one of the next samples (a random dword may look
		// like a marker of any other).
		if len(enc) == 4 {
			w := binary.LittleEndian.Uint32(enc)
			if k := int(w & 0xffff); w&^0xffff == slotMarker && k >= next && k < next+8 {
				next, first = k+1, true
			}
		}
	}
}

// TestDecodeAMDGPULLVMMC checks the length and kind of random instructions
// of every encoding against llvm-mc's disassembler, for gfx908 and gfx90a:
// the encodings, literal constants, SDWA and DPP that the code objects do
// not hold. Words llvm-mc does not decode are not compared (the decoder
// reads lengths; it does not validate opcodes).
func TestDecodeAMDGPULLVMMC(t *testing.T) {
	samples := amdgpuSamples(200)
	for _, mcpu := range []string{"gfx908", "gfx90a"} {
		lens, ops, crashed := llvmMC(t, mcpu, samples)
		checked, bad := 0, 0
		perFormat := map[string]int{}
		for i, s := range samples {
			if lens[i] == 0 {
				continue
			}
			checked++
			if f := gcnFormatOf(binary.LittleEndian.Uint32(s)); f != nil {
				perFormat[f.name]++
			}
			op, args, _ := strings.Cut(ops[i], " ")
			want, _ := llvmKind(llvmInst{op: op, args: args})
			in := amdgpu{}.Decode(s, 0x1000)
			if in.Len != lens[i] || in.Kind != want {
				if bad++; bad <= 20 {
					f := gcnFormatOf(binary.LittleEndian.Uint32(s))
					name := "none"
					if f != nil {
						name = f.name
					}
					t.Errorf("%s: % x (%s) %s: len %d kind %d, llvm-mc says len %d kind %d", mcpu, s[:lens[i]], name, ops[i], in.Len, in.Kind, lens[i], want)
				}
			}
		}
		var per []string
		for _, f := range gcnFormats {
			per = append(per, fmt.Sprintf("%s %d", f.name, perFormat[f.name]))
		}
		t.Logf("%s: %d of %d random instructions decoded by llvm-mc (%s; %d crashed it), %d differ", mcpu, checked, len(samples), strings.Join(per, ", "), crashed, bad)
	}
}
