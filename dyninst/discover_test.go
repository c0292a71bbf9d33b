package dyninst

import (
	"bytes"
	"debug/elf"
	"fmt"
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
		tab := Hpcstruct.Procedures(img, 2)
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
	for _, p := range procs.Find(dyninstImage(), procs.Options{}).Procs {
		found[p.Lo] = p.Source
	}
	if found[0x1050] != procs.Gap || found[0x1110] != procs.Symbol {
		t.Errorf("default mode: %v, want 0x1050 inferred and the stub at 0x1110", found)
	}
}
