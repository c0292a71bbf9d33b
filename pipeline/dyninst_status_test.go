package pipeline

import (
	"debug/elf"
	"fmt"
	"sort"
	"testing"

	"bloop/dyninst"
	"bloop/loader"
)

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
		tab := dyninst.Hpcstruct.Procedures(img, 2)
		if got := sortedKeys(tab.NoReturn); fmt.Sprint(got) != fmt.Sprint(c.noret) {
			t.Errorf("%s: noreturn %x, want %x", c.name, got, c.noret)
		}
		pl := newPlan(withProcs(img, tab, dyninst.Hpcstruct), Options{Dyninst: dyninst.Hpcstruct, Procs: tab}, 2)
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
