package isa

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"testing"
)

var kindNames = map[string]Kind{
	"Other": Other, "Jump": Jump, "CondJump": CondJump, "IndirectJump": IndirectJump,
	"Call": Call, "IndirectCall": IndirectCall, "Return": Return, "Halt": Halt,
	"Invalid": Invalid, "CondReturn": CondReturn,
}

// TestDecodePPC64LE runs the cases of testdata/ppc64le_decode.txt: kind,
// length and direct target of each instruction.
func TestDecodePPC64LE(t *testing.T) {
	f, err := os.Open("testdata/ppc64le_decode.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, "|")
		if len(fields) != 4 {
			t.Fatalf("line %d: want 4 fields: %q", line, text)
		}
		var code []byte
		for _, w := range strings.Fields(fields[0]) {
			v, err := strconv.ParseUint(w, 16, 32)
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			code = binary.LittleEndian.AppendUint32(code, uint32(v))
		}
		kind, ok := kindNames[fields[1]]
		if !ok {
			t.Fatalf("line %d: unknown kind %q", line, fields[1])
		}
		var target uint64
		if fields[2] != "-" {
			if target, err = strconv.ParseUint(strings.TrimPrefix(fields[2], "0x"), 16, 64); err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
		}
		in := ppc64le{}.Decode(code, 0x1000)
		if in.Kind != kind || in.Len != len(code) || in.Target != target || in.Addr != 0x1000 {
			t.Errorf("line %d: %s: kind %d len %d target %#x, want kind %d len %d target %#x",
				line, fields[3], in.Kind, in.Len, in.Target, kind, len(code), target)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no cases")
	}
}

// TestDecodePPC64LEShort: bytes that end before a whole instruction do
// not decode, and decoding still moves on.
func TestDecodePPC64LEShort(t *testing.T) {
	for _, b := range [][]byte{nil, {0x20}, {0x20, 0x00, 0x80}, {0x00, 0x00, 0x10, 0x04}} {
		if in := (ppc64le{}).Decode(b, 0x10); in.Kind != Invalid || in.Len != 4 {
			t.Errorf("% x: kind %d len %d, want Invalid of 4", b, in.Kind, in.Len)
		}
	}
}

// TestPLTSlotPPC64LE covers the call stub shapes of ELFv2 linkers.
func TestPLTSlotPPC64LE(t *testing.T) {
	const toc = 0x27f00
	for _, tc := range []struct {
		name string
		code []byte
		toc  uint64
		slot uint64
		ok   bool
	}{
		{"std r2,24(r1); ld r12,-32472(r2); mtctr; bctr", words(0xf8410018, 0xe9828128, 0x7d8903a6, 0x4e800420), toc, toc - 32472, true},
		{"ld r12,-32472(r2); mtctr; bctr (no TOC save)", words(0xe9828128, 0x7d8903a6, 0x4e800420), toc, toc - 32472, true},
		{"std; addis r12,r2,1; ld r12,-32752(r12); mtctr; bctr", words(0xf8410018, 0x3d820001, 0xe98c8010, 0x7d8903a6, 0x4e800420), toc, toc + 0x10000 - 32752, true},
		{"pld r12,16 (pc-relative); mtctr; bctr", words(0x04100000, 0xe5800010, 0x7d8903a6, 0x4e800420), 0, 0x1010, true},
		{"std; pld r12,16; mtctr; bctr", words(0xf8410018, 0x04100000, 0xe5800010, 0x7d8903a6, 0x4e800420), 0, 0x1014, true},
		{"TOC-relative without a TOC base", words(0xe9828128, 0x7d8903a6, 0x4e800420), 0, 0, false},
		{"ld r11 (not r12)", words(0xe9628128, 0x7d8903a6, 0x4e800420), toc, 0, false},
		{"ld r12 then mtlr", words(0xe9828128, 0x7d8803a6, 0x4e800020), toc, 0, false},
		{"no bctr", words(0xe9828128, 0x7d8903a6), toc, 0, false},
		{"a procedure's global entry", words(0x3c4c0002, 0x38427600, 0x7c0802a6, 0xf8010010), toc, 0, false},
		{"truncated", words(0xf8410018)[:2], toc, 0, false},
	} {
		slot, ok := ppc64le{toc: tc.toc}.PLTSlot(tc.code, 0x1000)
		if ok != tc.ok || slot != tc.slot {
			t.Errorf("%s: slot %#x %v, want %#x %v", tc.name, slot, ok, tc.slot, tc.ok)
		}
	}
}

// TestForTOC: the TOC base reaches ppc64le's PLT reader; other sets are
// unchanged.
func TestForTOC(t *testing.T) {
	if a := ForTOC(elf.EM_PPC64, 0x27f00); a.(ppc64le).toc != 0x27f00 {
		t.Errorf("toc not bound: %#v", a)
	}
	if a := ForTOC(elf.EM_X86_64, 0x27f00); a != (amd64{}) {
		t.Errorf("amd64 changed: %#v", a)
	}
}
