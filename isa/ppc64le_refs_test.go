package isa_test

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"bloop/cfg"
	"bloop/internal/testenv"
	"bloop/loader"
)

// odLine is one instruction of objdump -d --no-show-raw-insn.
type odLine struct {
	addr uint64
	op   string
	args []string // operands, the branch target's symbol dropped
}

// odFuncs reads objdump's disassembly of bin, by procedure symbol.
func odFuncs(t *testing.T, bin string) map[string][]odLine {
	out, err := exec.Command("powerpc64le-linux-gnu-objdump", "-d", "--no-show-raw-insn", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string][]odLine{}
	fn := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasSuffix(line, ">:") {
			fn = line[strings.IndexByte(line, '<')+1 : len(line)-2]
			continue
		}
		addr, rest, ok := strings.Cut(strings.TrimSpace(line), ":\t")
		a, err := strconv.ParseUint(addr, 16, 64)
		if !ok || err != nil || fn == "" {
			continue
		}
		rest, _, _ = strings.Cut(rest, " <")
		op, operands, _ := strings.Cut(rest, " ")
		var args []string
		for _, s := range strings.Split(strings.TrimSpace(operands), ",") {
			if s != "" {
				args = append(args, s)
			}
		}
		funcs[fn] = append(funcs[fn], odLine{a, op, args})
	}
	return funcs
}

// expectedTable reads the jump table of the bctr at code[j] from objdump's
// text alone: mtctr rT; add rT,rX,rY with one of them set by addi rB,rS,lo
// after addis rS,r2,hi (the table's address, TOC-relative); the last
// cmplwi before the bctr bounds the index. The entries are 4-byte offsets
// from the table. ok is false when the code has another shape.
func expectedTable(f *elfImage, code []odLine, j int) (targets []uint64, ok bool) {
	lastWrite := func(reg string, before int, op string) int {
		for i := before - 1; i >= 0; i-- {
			if len(code[i].args) > 0 && code[i].args[0] == reg && !strings.HasPrefix(code[i].op, "st") && !strings.HasPrefix(code[i].op, "cmp") {
				if code[i].op != op {
					return -1
				}
				return i
			}
		}
		return -1
	}
	m := j - 1
	if m < 0 || code[m].op != "mtctr" {
		return nil, false
	}
	add := lastWrite(code[m].args[0], m, "add")
	if add < 0 {
		return nil, false
	}
	var table uint64
	found := false
	for _, r := range code[add].args[1:] {
		lo := lastWrite(r, add, "addi")
		if lo < 0 {
			continue
		}
		hi := lastWrite(code[lo].args[1], lo, "addis")
		if hi < 0 || code[hi].args[1] != "r2" {
			continue
		}
		h, _ := strconv.ParseInt(code[hi].args[2], 0, 64)
		l, _ := strconv.ParseInt(code[lo].args[2], 0, 64)
		table, found = uint64(int64(f.toc)+h<<16+l), true
		break
	}
	n := -1
	for i := j - 1; i >= 0 && n < 0; i-- {
		if code[i].op == "cmplwi" {
			n, _ = strconv.Atoi(code[i].args[len(code[i].args)-1])
		}
	}
	if !found || n < 0 {
		return nil, false
	}
	for k := 0; k <= n; k++ {
		e, ok := f.word(table + uint64(4*k))
		if !ok {
			return nil, false
		}
		targets = append(targets, uint64(int64(table)+int64(int32(e))))
	}
	return targets, true
}

// elfImage reads the TOC base and table words with debug/elf, apart from
// the loader.
type elfImage struct {
	f   *elf.File
	toc uint64
}

func openELF(t *testing.T, bin string) *elfImage {
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Name == ".TOC." {
			return &elfImage{f, s.Value}
		}
	}
	t.Fatalf("%s: no .TOC. symbol", bin)
	return nil
}

// word is the 4-byte word at addr.
func (e *elfImage) word(addr uint64) (uint32, bool) {
	for _, s := range e.f.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Addr <= addr && addr+4 <= s.Addr+s.Size {
			b := make([]byte, 4)
			if _, err := s.ReadAt(b, int64(addr-s.Addr)); err != nil {
				return 0, false
			}
			return binary.LittleEndian.Uint32(b), true
		}
	}
	return 0, false
}

// TestJumpTablesPPC64LERefs: every bctr objdump shows in a procedure of
// the ppc64le reference binaries (not in a PLT stub) that has a jump
// table's shape resolves, in cfg.Build, to the targets the table holds.
func TestJumpTablesPPC64LERefs(t *testing.T) {
	testenv.Need(t, "powerpc64le-linux-gnu-objdump")
	bins := testenv.SharedGlob(t, "../../shared/hpcstruct-refs-arch/bin/*-ppc64le-*")

	tables := 0
	for _, bin := range bins {
		img, err := loader.Open(bin, loader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		li := openELF(t, bin)
		defer li.f.Close()
		for name, code := range odFuncs(t, bin) {
			for j, in := range code {
				if in.op != "bctr" || strings.Contains(name, ".plt_call.") || name == "__glink_PLTresolve" {
					continue
				}
				want, ok := expectedTable(li, code, j)
				if !ok {
					t.Errorf("%s: %s: bctr at %#x: not a jump table's shape", filepath.Base(bin), name, in.addr)
					continue
				}
				fn := img.FuncAt(in.addr)
				g, err := cfg.Build(img, fn.Addr, fn.Addr, fn.End, cfg.Options{})
				if err != nil {
					t.Fatalf("%s: %s: %v", bin, name, err)
				}
				var got []uint64
				for _, b := range g.Blocks {
					if last := b.Last(); last.Addr == in.addr {
						got = last.Table
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s: %s: bctr at %#x: targets %#x, want %#x", filepath.Base(bin), name, in.addr, got, want)
				}
				tables++
			}
		}
	}
	if tables == 0 {
		t.Error("no jump tables checked")
	}
	t.Logf("%d jump tables", tables)
}
