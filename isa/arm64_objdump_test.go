package isa_test

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"bloop/internal/testenv"
	"bloop/isa"
)

// aarch64Refs are the aarch64 reference binaries beside the repository
// and the repository's aarch64 corpus (testdata/bin-arm64).
func aarch64Refs(t *testing.T) []string {
	bins, _ := filepath.Glob("../../shared/hpcstruct-refs-arch/bin/*-aarch64-*")
	corpus, _ := filepath.Glob("../testdata/bin-arm64/*-O[0-9]")
	bins = append(bins, corpus...)
	if len(bins) == 0 {
		t.Fatal("no aarch64 binaries")

	}
	return bins
}

// objdumpInst is one line of `objdump -d`: address, word, mnemonic and
// operands.
type objdumpInst struct {
	addr uint64
	word uint32
	op   string
	args string
}

// objdumpARM64 disassembles every executable section of bin with GNU
// objdump, or skips the test when the cross objdump is not installed.
func objdumpARM64(t *testing.T, bin string) []objdumpInst {
	tool := testenv.Need(t, "aarch64-linux-gnu-objdump")
	out, err := exec.Command(tool, "-d", bin).Output()
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var insts []objdumpInst
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// "     b3c:	b4000040 	cbz	x0, b44 <call_weak_fn+0x10>"
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 3 || !strings.HasSuffix(f[0], ":") {
			continue
		}
		addr, err1 := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(f[0], ":")), 16, 64)
		word, err2 := strconv.ParseUint(strings.TrimSpace(f[1]), 16, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		in := objdumpInst{addr: addr, word: uint32(word), op: strings.TrimSpace(f[2])}
		if len(f) > 3 {
			in.args = strings.TrimSpace(f[3])
		}
		insts = append(insts, in)
	}
	return insts
}

// kindOf is the control-flow kind objdump's mnemonic names, and its
// target: the last hexadecimal operand before the symbol in <>.
func kindOf(in objdumpInst) (isa.Kind, uint64, bool) {
	target := func() uint64 {
		args := in.args
		if i := strings.IndexByte(args, '<'); i >= 0 {
			args = args[:i]
		}
		fs := strings.FieldsFunc(args, func(r rune) bool { return r == ',' || r == ' ' })
		if len(fs) == 0 {
			return 0
		}
		v, _ := strconv.ParseUint(fs[len(fs)-1], 16, 64)
		return v
	}
	op := in.op
	switch {
	case op == "b", op == "b.al", op == "b.nv":
		return isa.Jump, target(), true
	case op == "bl":
		return isa.Call, target(), true
	case strings.HasPrefix(op, "b."), strings.HasPrefix(op, "bc."),
		op == "cbz", op == "cbnz", op == "tbz", op == "tbnz":
		return isa.CondJump, target(), true
	case op == "br", op == "braa", op == "brab", op == "braaz", op == "brabz":
		return isa.IndirectJump, 0, true
	case op == "blr", op == "blraa", op == "blrab", op == "blraaz", op == "blrabz":
		return isa.IndirectCall, 0, true
	case op == "ret", op == "retaa", op == "retab", op == "eret", op == "eretaa", op == "eretab", op == "drps":
		return isa.Return, 0, true
	case op == "brk", op == "hlt", op == "udf":
		return isa.Halt, 0, true
	case strings.HasPrefix(op, "."): // .inst, .word: bytes objdump does not know
		return 0, 0, false
	}
	return isa.Other, 0, true
}

// TestObjdumpARM64 checks Decode against GNU objdump on every instruction
// of the aarch64 reference binaries' executable sections: the same kind
// (branch, conditional branch, call, return, indirect jump or call, trap,
// other) and the same direct target.
func TestObjdumpARM64(t *testing.T) {
	ar := isa.For(elf.EM_AARCH64)
	for _, bin := range aarch64Refs(t) {
		insts := objdumpARM64(t, bin)
		if len(insts) == 0 {
			t.Fatalf("%s: objdump printed no instructions", bin)
		}
		counts := map[isa.Kind]int{}
		bad := 0
		for _, in := range insts {
			kind, target, ok := kindOf(in)
			if !ok {
				continue
			}
			got := ar.Decode(binary4(in.word), in.addr)
			counts[got.Kind]++
			if got.Kind != kind || got.Target != target || got.Len != 4 {
				if bad++; bad <= 10 {
					t.Errorf("%s %#x %08x %s %s: kind %d target %#x, objdump says kind %d target %#x",
						filepath.Base(bin), in.addr, in.word, in.op, in.args, got.Kind, got.Target, kind, target)
				}
			}
		}
		t.Logf("%s: %d instructions, %d jumps, %d conditional, %d calls, %d returns, %d indirect jumps, %d indirect calls",
			filepath.Base(bin), len(insts), counts[isa.Jump], counts[isa.CondJump], counts[isa.Call],
			counts[isa.Return], counts[isa.IndirectJump], counts[isa.IndirectCall])
	}
}

func binary4(w uint32) []byte { return []byte{byte(w), byte(w >> 8), byte(w >> 16), byte(w >> 24)} }
