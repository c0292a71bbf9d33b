package loader

import (
	"debug/elf"
	"reflect"
	"testing"

	"bloop/isa"
)

var testDynsyms = []elf.Symbol{{Name: "realloc"}, {Name: "_dl_exception_create"}, {Name: "calloc"}}

// TestFBTNames pins Dyninst's naming of .plt stubs: by the position of the
// relocation in .rela.plt, not by the slot its stub jumps through; an
// IRELATIVE relocation names no symbol.
func TestFBTNames(t *testing.T) {
	const irelative = 37 // R_X86_64_IRELATIVE
	relocs := []rela{
		{off: 0x3010, typ: uint32(elf.R_X86_64_JMP_SLOT), sym: 1},
		{off: 0x3020, typ: uint32(elf.R_X86_64_JMP_SLOT), sym: 2},
		{off: 0x3038, typ: uint32(elf.R_X86_64_JMP_SLOT), sym: 3},
		{off: 0x3000, typ: irelative, addend: 0x9f550},
		{off: 0x3018, typ: irelative, addend: 0x9f250},
	}
	out := map[uint64]string{}
	fbtNames(out, 0x26000, relocs, testDynsyms)
	want := map[uint64]string{0x26010: "realloc", 0x26020: "_dl_exception_create", 0x26030: "calloc", 0x26040: "", 0x26050: ""}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("got %v, want %v", out, want)
	}
}

// pltSecStub is an IBT stub jumping through slot: endbr64; bnd jmp
// *disp(%rip); nop.
func pltSecStub(addr, slot uint64) []byte {
	d := uint32(slot - (addr + 11))
	return []byte{0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25, byte(d), byte(d >> 8), byte(d >> 16), byte(d >> 24), 0x0f, 0x1f, 0x44, 0, 0}
}

// TestPLTSecNames pins .plt.sec: by the slot the displacement at byte 7
// points to; an ifunc slot (no symbol) is ifunc<addr>; a slot no
// relocation names leaves the stub unnamed.
func TestPLTSecNames(t *testing.T) {
	sec := &Section{Name: ".plt.sec", Addr: 0x1100}
	for i, slot := range []uint64{0x4018, 0x4020, 0x4028} {
		sec.Data = append(sec.Data, pltSecStub(sec.Addr+uint64(16*i), slot)...)
	}
	out := map[uint64]string{}
	pltSecNames(out, sec, map[uint64]string{0x4018: "puts", 0x4020: ""})
	want := map[uint64]string{0x1100: "puts", 0x1110: "ifunc1110"}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("got %v, want %v", out, want)
	}
}

// TestPLTGotNames8 pins .plt.got: every jmp *disp(%rip) (ff 25, then a
// two-byte nop) by its slot's .rela.dyn relocation, a RELATIVE one (no
// symbol) giving an empty name.
func TestPLTGotNames8(t *testing.T) {
	sec := &Section{Name: ".plt.got", Addr: 0x6b2e0}
	for i, slot := range []uint64{0x2bccb8, 0x2bccf0, 0x2bcd90} {
		d := uint32(slot - (sec.Addr + uint64(8*i) + 6))
		sec.Data = append(sec.Data, 0xff, 0x25, byte(d), byte(d>>8), byte(d>>16), byte(d>>24), 0x66, 0x90)
	}
	out := map[uint64]string{}
	pltGotNames(out, sec, isa.For(elf.EM_X86_64), map[uint64]string{0x2bccb8: "gsl_integration_qk15", 0x2bcd90: ""})
	want := map[uint64]string{0x6b2e0: "gsl_integration_qk15", 0x6b2f0: ""}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("got %v, want %v", out, want)
	}
}

// TestDyninstPLTNamesLibc pins the rule on libc.so.6 (Debian 12's, whose
// .plt has 39 IRELATIVE slots after 14 JUMP_SLOT ones): hpcstruct's
// realloc@plt is the stub at 0x26010, realloc's own stub (0x26030) is
// calloc@plt, 0x260f0 on are "@plt", and the two .plt.got stubs (16
// bytes) are unnamed. Without Dyninst's names each stub has its slot's.
func TestDyninstPLTNamesLibc(t *testing.T) {
	const libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	if !isBuild(t, libc, "93ac61ec5a8eb1396f9fbd350e3169a558528a40") {
		t.Skip("not the libc the facts are about")
	}
	for _, c := range []struct {
		dyninst bool
		want    map[uint64]string
	}{
		{true, map[uint64]string{0x26010: "realloc@plt", 0x26030: "calloc@plt", 0x260e0: "_dl_audit_preinit@plt", 0x260f0: "@plt", 0x26350: "@plt", 0x26360: "targ26360@plt", 0x26368: "targ26368@plt"}},
		{false, map[uint64]string{0x26030: "realloc@plt", 0x26010: "targ26010@plt", 0x26360: "free@plt", 0x26368: "malloc@plt"}},
	} {
		img, err := Open(libc, Options{DyninstPLTNames: c.dyninst, SkipDescriptors: true})
		if err != nil {
			t.Fatal(err)
		}
		for addr, want := range c.want {
			if f := img.FuncAt(addr); f == nil || f.Addr != addr || !f.PLT || f.Name != want {
				t.Errorf("Dyninst names %v: stub at %#x is %+v, want %s", c.dyninst, addr, f, want)
			}
		}
		if img.DyninstExec || !img.DyninstProgram || img.Shared {
			t.Errorf("libc.so.6: DyninstExec %v, DyninstProgram %v, Shared %v; want false, true, false", img.DyninstExec, img.DyninstProgram, img.Shared)
		}
	}
}

// TestDyninstCalleeNames pins the name Dyninst's DWARF walk gives an
// inlined callee: the last along the chain of the inline record's
// abstract origin and specification, DW_AT_linkage_name where an entry
// has one, never DW_AT_MIPS_linkage_name. glibc's __woverflow is defined
// without one but declared with the asm label __GI___woverflow; clang's
// vector constructor has its linkage name on the abstract instance and
// only a name on the declaration; nvcc's cubins have only the MIPS
// attribute, and DW_AT_name holds the plain name (11.8) or the mangled
// one (11.2).
func TestDyninstCalleeNames(t *testing.T) {
	const cuda = "../../shared/hpctoolkit-cuda/bin/"
	const mangled = "_ZN70_INTERNAL_48_tmpxft_00000008_00000000_7_inlines_loops_cpp1_ii_d1d8cd7d9f4_inlineEv"
	cases := []struct {
		bin, buildID, name, want string
	}{
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", "93ac61ec5a8eb1396f9fbd350e3169a558528a40", "__woverflow", "__GI___woverflow"},
		{corpus + "tmpl-clang14-O2", "", "vector", "vector"},
		{cuda + "inlines+loops-sm_87-nvcc118-0", "", "f4_inline", "f4_inline"},
		{cuda + "inlines+loops-sm_75-nvcc112-0", "", mangled, mangled},
	}
	for _, c := range cases {
		if c.buildID != "" && !isBuild(t, c.bin, c.buildID) {
			continue
		}
		img, err := Open(c.bin, Options{SkipDescriptors: true})
		if err != nil {
			t.Fatal(err)
		}
		var found *Callee
		var walk func([]*Inline)
		walk = func(ins []*Inline) {
			for _, in := range ins {
				if found == nil && in.Callee.Name == c.name {
					found = in.Callee
				}
				walk(in.Children)
			}
		}
		for _, p := range img.Procs {
			walk(p.Inlines)
		}
		if found == nil {
			t.Errorf("%s: no inlined call of %s", c.bin, c.name)
		} else if found.DyninstName != c.want {
			t.Errorf("%s: %s is %q to Dyninst, want %q", c.bin, c.name, found.DyninstName, c.want)
		}
	}
}
