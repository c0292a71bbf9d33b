package isa_test

import (
	"debug/elf"
	"encoding/binary"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"bloop/cfg"
	"bloop/loader"
)

// TestSwitchesARM64 resolves every jump-table dispatch of the aarch64
// reference binaries through cfg.Build and compares the targets with the
// table as objdump's text describes it (switchOracle: the adr/adrp+add
// bases, the load's width and the add's extension as objdump prints them,
// the entries read from the file). ctrl.c's switch has its case k on
// line 8+k: clang's table (main, where table_dispatch is inlined) must
// reach them in order.
func TestSwitchesARM64(t *testing.T) {
	tables := 0
	for _, bin := range aarch64Refs(t) {
		insts := objdumpARM64(t, bin)
		img, err := loader.Open(bin, loader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ef, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		for i, in := range insts {
			if in.op != "br" {
				continue
			}
			want, ok := switchOracle(insts[:i+1], ef)
			if !ok {
				continue // a tail call or PLT stub
			}
			tables++
			fn := img.FuncAt(in.addr)
			if fn == nil {
				t.Fatalf("%s %#x: no procedure", bin, in.addr)
			}
			g, err := cfg.Build(img, fn.Addr, fn.Addr, fn.End, cfg.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, b := range g.Blocks {
				if l := b.Last(); l.Addr == in.addr {
					got = l.Table
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s %#x: targets %x, objdump's table %x", filepath.Base(bin), in.addr, got, want)
			}
			if strings.HasPrefix(filepath.Base(bin), "ctrl-") {
				for k, a := range got {
					if r, ok := img.Lines.Lookup(a); !ok || r.Line != 8+k {
						t.Errorf("%s: case %d at %#x is on line %d, want %d", filepath.Base(bin), k, a, r.Line, 8+k)
					}
				}
			}
		}
		ef.Close()
	}
	t.Logf("%d dispatches", tables)
	if tables == 0 {
		t.Error("no jump table in the aarch64 references (ctrl-aarch64-clang14-O2's main has one)")
	}
}

var (
	reAdd  = regexp.MustCompile(`^(x\d+), (x\d+), ([wx]\d+)(?:, (lsl|sxtb|sxth|sxtw|uxtb|uxth|uxtw) #(\d+))?$`)
	reLoad = regexp.MustCompile(`^[wx]\d+, \[(x\d+), ([wx]\d+)(?:, (?:lsl|uxtw|sxtw)(?: #(\d+))?)?\]$`)
	reAddr = regexp.MustCompile(`^(x\d+), ([0-9a-f]+)\b`)
	reImm  = regexp.MustCompile(`^(x\d+), (x\d+), #0x([0-9a-f]+)$`)
	reCmp  = regexp.MustCompile(`^w\d+, #0x([0-9a-f]+)$`)
)

// switchOracle computes the targets of the br that ends insts from
// objdump's text alone: add xT, xBase, wEntry, <ext> #s; the ldr of the
// entry from [xTable, xIndex]; the adr, or adrp and add, of both bases;
// the number of entries from the nearest cmp #n and b.hi / b.ls above. ok
// is false when the br is no dispatch of that shape.
func switchOracle(insts []objdumpInst, ef *elf.File) ([]uint64, bool) {
	n := len(insts)
	reg := insts[n-1].args
	// def is the nearest instruction above i that writes register r.
	def := func(i int, r string) int {
		w := strings.TrimPrefix(strings.TrimPrefix(r, "x"), "w")
		for j := i - 1; j >= 0 && j > i-40; j-- {
			a := insts[j].args
			if strings.HasPrefix(a, "x"+w+",") || strings.HasPrefix(a, "w"+w+",") {
				if !strings.HasPrefix(insts[j].op, "st") && insts[j].op != "cmp" {
					return j
				}
			}
		}
		return -1
	}
	// addr is the address r holds at i: adr, or adrp then add.
	var addr func(i int, r string) (uint64, bool)
	addr = func(i int, r string) (uint64, bool) {
		j := def(i, r)
		if j < 0 {
			return 0, false
		}
		switch in := insts[j]; in.op {
		case "adr", "adrp":
			m := reAddr.FindStringSubmatch(in.args)
			if m == nil {
				return 0, false
			}
			v, err := strconv.ParseUint(m[2], 16, 64)
			return v, err == nil
		case "add":
			m := reImm.FindStringSubmatch(in.args)
			if m == nil {
				return 0, false
			}
			b, ok := addr(j, m[2])
			imm, _ := strconv.ParseUint(m[3], 16, 64)
			return b + imm, ok
		}
		return 0, false
	}
	a := def(n-1, reg)
	if a < 0 || insts[a].op != "add" {
		return nil, false
	}
	m := reAdd.FindStringSubmatch(insts[a].args)
	if m == nil {
		return nil, false
	}
	base, ok := addr(a, m[2])
	if !ok {
		return nil, false
	}
	ext, shift := m[4], 0
	if m[5] != "" {
		shift, _ = strconv.Atoi(m[5])
	}
	l := def(a, m[3])
	if l < 0 {
		return nil, false
	}
	lm := reLoad.FindStringSubmatch(insts[l].args)
	size := map[string]int{"ldrb": 1, "ldrsb": 1, "ldrh": 2, "ldrsh": 2, "ldrsw": 4, "ldr": 4}[insts[l].op]
	if lm == nil || size == 0 {
		return nil, false
	}
	table, ok := addr(l, lm[1])
	if !ok {
		return nil, false
	}
	count := 0
	for j := l - 1; j > 0 && j > l-40; j-- {
		if insts[j].op == "b.hi" && insts[j-1].op == "cmp" {
			if c := reCmp.FindStringSubmatch(insts[j-1].args); c != nil {
				v, _ := strconv.ParseUint(c[1], 16, 64)
				count = int(v) + 1
			}
			break
		}
	}
	if count == 0 {
		return nil, false
	}
	var out []uint64
	for k := 0; k < count; k++ {
		b := readAt(ef, table+uint64(k*size), size)
		if b == nil {
			return nil, false
		}
		var v int64
		switch {
		case size == 1 && (ext == "sxtb" || insts[l].op == "ldrsb"):
			v = int64(int8(b[0]))
		case size == 1:
			v = int64(b[0])
		case size == 2 && (ext == "sxth" || insts[l].op == "ldrsh"):
			v = int64(int16(binary.LittleEndian.Uint16(b)))
		case size == 2:
			v = int64(binary.LittleEndian.Uint16(b))
		default:
			v = int64(int32(binary.LittleEndian.Uint32(b)))
		}
		out = append(out, uint64(int64(base)+v<<shift))
	}
	return out, true
}

// readAt reads n bytes at address a of the file's loaded sections.
func readAt(ef *elf.File, a uint64, n int) []byte {
	for _, s := range ef.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type == elf.SHT_PROGBITS && a >= s.Addr && a+uint64(n) <= s.Addr+s.Size {
			b := make([]byte, n)
			if _, err := s.ReadAt(b, int64(a-s.Addr)); err != nil {
				return nil
			}
			return b
		}
	}
	return nil
}
