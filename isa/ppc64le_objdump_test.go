package isa

import (
	"bloop/internal/testenv"
	"bufio"
	"bytes"
	"encoding/hex"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The cross objdump and the reference binaries of ../shared.
const (
	ppcObjdump = "powerpc64le-linux-gnu-objdump"
	ppcRefBins = "../../shared/hpcstruct-refs-arch/bin/*-ppc64le-*"
)

// objdumpInst is one instruction line of objdump -d.
type objdumpInst struct {
	addr     uint64
	code     []byte
	mnemonic string // without the branch hint (+ or -)
	args     string
}

// objdumpLine matches " 6e0:\t18 00 41 f8 \tstd     r2,24(r1)".
var objdumpLine = regexp.MustCompile(`^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t(\S+)\s*(.*)$`)

// objdumpCode disassembles every executable section of bin.
func objdumpCode(t *testing.T, bin string) []objdumpInst {
	t.Helper()
	out, err := exec.Command(ppcObjdump, "-d", bin).Output()
	if err != nil {
		t.Fatalf("%s -d %s: %v", ppcObjdump, bin, err)
	}
	var insts []objdumpInst
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := objdumpLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		addr, _ := strconv.ParseUint(m[1], 16, 64)
		code, err := hex.DecodeString(strings.ReplaceAll(m[2], " ", ""))
		if err != nil {
			t.Fatalf("%s: %q: %v", bin, sc.Text(), err)
		}
		insts = append(insts, objdumpInst{addr, code, strings.TrimRight(m[3], "+-"), m[4]})
	}
	return insts
}

// target is the branch target objdump prints: "cr7,72c <_init+0x2c>".
func (o objdumpInst) target() uint64 {
	s := o.args
	if i := strings.Index(s, " <"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, ','); i >= 0 {
		s = s[i+1:]
	}
	t, _ := strconv.ParseUint(s, 16, 64)
	return t
}

// condBranch matches the extended mnemonics of bc, bclr, bcctr and
// bctar: the condition (or CTR test), then lr/ctr/tar, l, a.
var condBranch = regexp.MustCompile(`^b(dnz|dz)?(t|f|lt|le|eq|ge|gt|nl|ne|ng|so|ns|un|nu)?(lr|ctr|tar)?(l)?(a)?$`)

// objdumpKind is the control-flow kind objdump's text says, and whether
// it says one at all (tw and td with a condition do not tell whether it
// always holds).
func objdumpKind(o objdumpInst) (Kind, uint64, bool) {
	m := o.mnemonic
	next := o.addr + uint64(len(o.code))
	switch {
	case m == ".long" || m == "attn":
		return Invalid, 0, true // attn is the zero word's neighbour: only on some chips
	case m == "trap":
		return Halt, 0, true
	case m == "rfid" || m == "hrfid":
		return Return, 0, true
	case strings.HasPrefix(m, "tw") || strings.HasPrefix(m, "td"):
		return 0, 0, false
	case m == "b" || m == "ba":
		return Jump, o.target(), true
	case m == "bl" || m == "bla":
		if o.target() == next {
			return Other, 0, true
		}
		return Call, o.target(), true
	case m == "bc" || m == "bcl":
		bo, _ := strconv.Atoi(strings.SplitN(o.args, ",", 2)[0])
		switch {
		case m == "bcl" && o.target() == next:
			return Other, 0, true
		case m == "bcl":
			return Call, o.target(), true
		case bo&0x14 == 0x14:
			return Jump, o.target(), true
		}
		return CondJump, o.target(), true
	}
	c := condBranch.FindStringSubmatch(m)
	if c == nil {
		return Other, 0, true
	}
	always := c[1] == "" && c[2] == ""
	switch {
	case c[3] != "" && c[4] != "": // blrl, bctrl, beqctrl
		return IndirectCall, 0, true
	case c[3] == "lr" && always:
		return Return, 0, true
	case (c[3] == "ctr" || c[3] == "tar") && always:
		return IndirectJump, 0, true
	case c[3] != "":
		return CondReturn, 0, true
	case c[4] != "": // beql: a conditional call
		return Call, o.target(), true
	}
	return CondJump, o.target(), true
}

// TestDecodePPC64LEObjdump decodes every instruction of the reference
// binaries' code sections and checks it against GNU objdump's reading:
// direct jumps, conditional branches and calls with their targets,
// returns, indirect branches, traps, and words that are no instruction.
func TestDecodePPC64LEObjdump(t *testing.T) {
	testenv.Need(t, ppcObjdump)
	for _, bin := range crossBinaries(t, "ppc64le", "ppc64le") {
		insts := objdumpCode(t, bin)
		branches, bad := 0, 0
		for _, o := range insts {
			want, target, ok := objdumpKind(o)
			if !ok {
				continue
			}
			in := ppc64le{}.Decode(o.code, o.addr)
			if want != Invalid && in.Len != len(o.code) || in.Kind != want || in.Target != target {
				if bad++; bad <= 10 {
					t.Errorf("%s: %#x %s %s: kind %d len %d target %#x, want kind %d len %d target %#x",
						filepath.Base(bin), o.addr, o.mnemonic, o.args, in.Kind, in.Len, in.Target, want, len(o.code), target)
				}
			}
			if want != Other && want != Invalid {
				branches++
			}
		}
		if branches == 0 {
			t.Errorf("%s: no branches checked", bin)
		}
		t.Logf("%s: %d instructions, %d branches agree", filepath.Base(bin), len(insts), branches)
	}
}
