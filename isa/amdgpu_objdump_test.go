package isa

import (
	"bloop/internal/testenv"
	"bufio"
	"bytes"
	"encoding/binary"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// amdgpuBins are the AMD GPU code objects of ../shared (gfx908 and gfx90a,
// clang 14 at -O0, -O2, -O3).
func amdgpuBins(t *testing.T) []string {
	bins := testenv.SharedGlob(t, "../../shared/hpcstruct-amdgpu/bin/*-gfx*")

	return bins
}

// mcpuOf is the processor a code object's name says it is built for.
func mcpuOf(bin string) string {
	return regexp.MustCompile(`gfx[0-9a-f]+`).FindString(filepath.Base(bin))
}

// llvmInst is one instruction as llvm-objdump prints it: its text and the
// address and dwords of its comment ("// 000000001C10: BE8000FF 92492493"),
// and the target it names ("<stencil+0x200>") resolved with the labels.
type llvmInst struct {
	addr   uint64
	code   []byte
	op     string
	args   string
	target uint64
	named  bool // a <symbol+offset> target was printed
}

var (
	llvmLabel = regexp.MustCompile(`^([0-9a-f]+) <(\S+)>:$`)
	llvmLine  = regexp.MustCompile(`^\s+(\S+)\s*(.*?)\s*// ([0-9A-F]+): ((?:[0-9A-F]{8} ?)+)(?:<(\S+?)(?:\+0x([0-9a-f]+))?>)?$`)
)

// llvmObjdump disassembles bin's code for processor mcpu, or skips the
// test when llvm-objdump is not installed.
func llvmObjdump(t *testing.T, bin, mcpu string) []llvmInst {
	t.Helper()
	tool := testenv.Need(t, "llvm-objdump")
	out, err := exec.Command(tool, "-d", "--mcpu="+mcpu, bin).Output()
	if err != nil {
		t.Fatalf("%s -d --mcpu=%s %s: %v", tool, mcpu, bin, err)
	}
	labels := map[string]uint64{}
	var insts []llvmInst
	var symbolic []string // target symbol per instruction, "" for none
	var offsets []uint64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := llvmLabel.FindStringSubmatch(line); m != nil {
			a, _ := strconv.ParseUint(m[1], 16, 64)
			labels[m[2]] = a
			continue
		}
		m := llvmLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		in := llvmInst{op: m[1], args: m[2]}
		in.addr, _ = strconv.ParseUint(m[3], 16, 64)
		for _, d := range strings.Fields(m[4]) {
			v, _ := strconv.ParseUint(d, 16, 32)
			in.code = binary.LittleEndian.AppendUint32(in.code, uint32(v))
		}
		off, _ := strconv.ParseUint(m[6], 16, 64)
		insts, symbolic, offsets = append(insts, in), append(symbolic, m[5]), append(offsets, off)
	}
	for i, s := range symbolic {
		if a, ok := labels[s]; ok {
			insts[i].target, insts[i].named = a+offsets[i], true
		}
	}
	return insts
}

// llvmKind is the control-flow kind llvm-objdump's mnemonic names, and
// whether the instruction has a direct target.
func llvmKind(in llvmInst) (k Kind, direct bool) {
	switch op := in.op; {
	case op == "s_branch":
		return Jump, true
	case op == "s_call_b64":
		return Call, true
	case op == "s_cbranch_join", op == "s_cbranch_g_fork":
		return CondReturn, false
	case strings.HasPrefix(op, "s_cbranch_"):
		return CondJump, true
	case op == "s_setpc_b64":
		return IndirectJump, false
	case op == "s_swappc_b64":
		return IndirectCall, false
	case strings.HasPrefix(op, "s_endpgm"), op == "s_rfe_b64", op == "s_rfe_restore_b64":
		return Return, false
	case op == "s_trap":
		return Halt, false
	case op == "s_sethalt":
		if v, err := strconv.ParseUint(in.args, 0, 16); err == nil && v&1 == 1 {
			return Halt, false
		}
	}
	return Other, false
}

// TestDecodeAMDGPUObjdump decodes every instruction llvm-objdump prints of
// the 12 code objects, each for its own processor, and checks the length
// (literal constants included) and the kind, and every branch's target
// against the one llvm-objdump names.
func TestDecodeAMDGPUObjdump(t *testing.T) {
	for _, bin := range amdgpuBins(t) {
		mcpu := mcpuOf(bin)
		insts := llvmObjdump(t, bin, mcpu)
		if len(insts) == 0 {
			t.Fatalf("%s: llvm-objdump printed no instructions", bin)
		}
		counts := map[Kind]int{}
		bad := 0
		for i, o := range insts {
			if i > 0 && o.addr != insts[i-1].addr+uint64(len(insts[i-1].code)) {
				t.Errorf("%s: %#x follows %#x: a line of llvm-objdump was not read", filepath.Base(bin), o.addr, insts[i-1].addr)
			}
			kind, direct := llvmKind(o)
			in := amdgpu{}.Decode(o.code, o.addr)
			target := uint64(0)
			if direct {
				if !o.named {
					t.Errorf("%s %#x %s %s: no target printed", filepath.Base(bin), o.addr, o.op, o.args)
				}
				target = o.target
			}
			counts[in.Kind]++
			if in.Len != len(o.code) || in.Kind != kind || in.Target != target {
				if bad++; bad <= 10 {
					t.Errorf("%s %#x % x %s %s: len %d kind %d target %#x, llvm-objdump says len %d kind %d target %#x",
						filepath.Base(bin), o.addr, o.code, o.op, o.args, in.Len, in.Kind, in.Target, len(o.code), kind, target)
				}
			}
		}
		if counts[CondJump] == 0 || counts[Return] == 0 {
			t.Errorf("%s: no conditional branch or s_endpgm checked", bin)
		}
		t.Logf("%s (%s): %d instructions, %d jumps, %d conditional, %d returns, %d indirect jumps, %d indirect calls",
			filepath.Base(bin), mcpu, len(insts), counts[Jump], counts[CondJump], counts[Return], counts[IndirectJump], counts[IndirectCall])
	}
}
