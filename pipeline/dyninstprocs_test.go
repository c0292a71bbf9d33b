package pipeline

import (
	"bytes"
	"debug/elf"
	"fmt"
	"sort"
	"strings"
	"testing"

	"bloop/loader"
	"bloop/procs"
)

// dyninstText is a .text at 0x1000 with one symbol, f: f calls code no
// symbol covers at 0x1020 and the first PLT stub; that code calls 0x1040;
// the code at 0x1050 (reached by nothing) calls the second stub.
func dyninstImage() *loader.Image {
	pad := func(n int) []byte { return bytes.Repeat([]byte{0xcc}, n) }
	var text []byte
	text = append(text, 0xe8, 0x1b, 0, 0, 0) // 1000 call 1020
	text = append(text, 0xe8, 0xf6, 0, 0, 0) // 1005 call 1100 (stub)
	text = append(text, 0xc3)                // 100a ret
	text = append(text, pad(0x15)...)        // 100b
	text = append(text, 0xe8, 0x1b, 0, 0, 0) // 1020 call 1040
	text = append(text, 0xc3)                // 1025 ret
	text = append(text, pad(0x1a)...)        // 1026
	text = append(text, 0xc3)                // 1040 ret
	text = append(text, pad(0xf)...)         // 1041
	text = append(text, 0xe8, 0xbb, 0, 0, 0) // 1050 call 1110 (stub)
	text = append(text, 0xc3)                // 1055 ret
	stub := append([]byte{0xff, 0x25, 0, 0x10, 0, 0}, pad(10)...)
	plt := append(append([]byte(nil), stub...), stub...)
	f := &loader.Func{Name: "f", Aliases: []string{"f"}, Addr: 0x1000, End: 0x1010, Sized: true}
	s1 := &loader.Func{Name: "puts@plt", Aliases: []string{"puts@plt"}, Addr: 0x1100, End: 0x1110, PLT: true, Sized: true}
	s2 := &loader.Func{Name: "exit@plt", Aliases: []string{"exit@plt"}, Addr: 0x1110, End: 0x1120, PLT: true, Sized: true}
	return &loader.Image{Name: "lib.so", Arch: loader.AMD64, Machine: elf.EM_X86_64,
		Sections: []*loader.Section{{Name: ".text", Addr: 0x1000, Data: text}, {Name: ".plt", Addr: 0x1100, Data: plt}},
		Funcs:    []*loader.Func{f, s1, s2}, Lines: &loader.LineTable{}}
}

// TestDyninstProcedures pins compat mode's procedures, ParseAPI's: the
// symbols, the call targets their parse reaches (transitively), and only
// the PLT stubs parsed code calls; the stub before an uncalled one runs
// on over it, and code nothing parsed reaches is in no procedure. The
// entry point of a program starts _start.
func TestDyninstProcedures(t *testing.T) {
	for _, c := range []struct {
		name    string
		program bool
		want    string
	}{
		{"library", false, "[1000,1010) symbols f; [1020,1040) call targets targ1020; [1040,1056) call targets targ1040; [1100,1120) symbols puts@plt"},
		{"program", true, "[1000,1010) symbols f; [1020,1040) call targets targ1020; [1040,1050) call targets targ1040; " +
			"[1050,1056) entry _start; [1100,1110) symbols puts@plt; [1110,1120) symbols exit@plt"},
	} {
		img := dyninstImage()
		img.DyninstProgram, img.Entry = c.program, 0x1050
		tab := dyninstProcedures(img, 2)
		var got []string
		for _, p := range tab.Procs {
			got = append(got, fmt.Sprintf("[%x,%x) %v %s", p.Lo, p.Hi, p.Source, p.Name()))
		}
		if s := strings.Join(got, "; "); s != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, s, c.want)
		}
	}
	// The default mode infers a procedure in the code nothing calls, and
	// keeps every stub.
	found := map[uint64]procs.Source{}
	for _, p := range Procedures(dyninstImage(), Options{}).Procs {
		found[p.Lo] = p.Source
	}
	if found[0x1050] != procs.Gap || found[0x1110] != procs.Symbol {
		t.Errorf("default mode: %v, want 0x1050 inferred and the stub at 0x1110", found)
	}
}

// returnImage has f, whose last instruction calls g, then padding and h;
// g is body (a ret, or a jump to itself) and k tail-calls g.
func returnImage(body []byte) *loader.Image {
	text := make([]byte, 0x40)
	copy(text, []byte{0xe8, 0x1b, 0, 0, 0, 0x0f, 0x1f, 0x00}) // 1000 call 1020; 1005 nopl (padding)
	copy(text[0x08:], []byte{0x31, 0xc0, 0xc3})               // 1008 h: xor eax,eax; ret
	copy(text[0x20:], body)                                   // 1020 g
	copy(text[0x30:], []byte{0xeb, 0xee})                     // 1030 k: jmp 1020
	sym := func(name string, lo, hi uint64) *loader.Func {
		return &loader.Func{Name: name, Aliases: []string{name}, Addr: lo, End: hi, Sized: true}
	}
	return &loader.Image{Name: "lib.so", Arch: loader.AMD64, Machine: elf.EM_X86_64,
		Sections: []*loader.Section{{Name: ".text", Addr: 0x1000, Data: text}},
		Funcs:    []*loader.Func{sym("f", 0x1000, 0x1005), sym("h", 0x1008, 0x100b), sym("g", 0x1020, 0x1030), sym("k", 0x1030, 0x1032)},
		Lines:    &loader.LineTable{}}
}

// TestDyninstReturnStatus pins Dyninst's return-status analysis: a
// function of the module returns when its parse reaches a return (or a
// tail call to one that returns). A call to one that does not ends its
// block; after one that does, the parse runs on past the caller's extent
// into the next function, which is then written without its own code.
func TestDyninstReturnStatus(t *testing.T) {
	for _, c := range []struct {
		name           string
		body           []byte
		noret, claimed []uint64
	}{
		{"g returns", []byte{0xc3}, nil, []uint64{0x1008}},
		{"g loops forever (and so f never returns)", []byte{0xeb, 0xfe}, []uint64{0x1000, 0x1020, 0x1030}, nil},
	} {
		img := returnImage(c.body)
		tab := dyninstProcedures(img, 2)
		if got := sortedKeys(tab.NoReturn); fmt.Sprint(got) != fmt.Sprint(c.noret) {
			t.Errorf("%s: noreturn %x, want %x", c.name, got, c.noret)
		}
		pl := newPlan(withProcs(img, tab, true), Options{Compat: true, Procs: tab}, 2)
		claimed := map[uint64]bool{}
		for a := range pl.claimed {
			claimed[a] = true
		}
		if got := sortedKeys(claimed); fmt.Sprint(got) != fmt.Sprint(c.claimed) {
			t.Errorf("%s: claimed %x, want %x", c.name, got, c.claimed)
		}
	}
}

func sortedKeys(m map[uint64]bool) []uint64 {
	var out []uint64
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
