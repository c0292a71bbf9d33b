package unwind

import (
	"encoding/binary"
	"testing"

	"bloop/loader"
)

// TestWalkBrokenRecipe: where a procedure's recipe leads to a return
// address in no module (a frame entered with words pushed above its
// return address that the analysis did not know of, as the dynamic
// linker's resolver before its name was known), the walk goes on by the
// stack scan, checked as for a frame without recipe, to the entry.
func TestWalkBrokenRecipe(t *testing.T) {
	const base = 0x1000
	prog := []line{
		{"main", "call h", ""},
		{"", "ret", ""},
		{"h", "push rbx", ""},
		{"", "pop rbx", ""},
		{"", "add rsp,16", ""},
		{"", "jmp rax", ""},
	}
	code, labels, _ := assemble(t, base, prog)
	img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: base, Data: code}}, nil)
	img.Funcs = []*loader.Func{{Name: "main", Aliases: []string{"main"}, Addr: base}, {Name: "h", Aliases: []string{"h"}, Addr: labels["h"]}}
	fixEnds(img, base+uint64(len(code)))
	img.Entry = base
	m := NewModule(img)
	look := func(pc uint64) (*Module, uint64, bool) {
		return m, pc, pc >= base && pc < base+uint64(len(code))
	}
	ret := uint64(base + 5) // after call h
	const sp = 0x7ff000
	var stack []byte
	for _, w := range []uint64{0, 0x7fff0000 /* a data address pushed above the return address */, 5, ret} {
		stack = binary.LittleEndian.AppendUint64(stack, w)
	}
	for _, c := range []struct {
		name string
		pc   uint64
		regs Frame
		want []uint64
		out  Outcome
	}{
		// At h+1 the recipe (from a call's entry state) reads the data
		// word as the return address; the scan finds main's call.
		{"recipe broken", labels["h"] + 1, Frame{SP: sp}, []uint64{labels["h"] + 1, ret - 1}, Complete},
	} {
		c.regs.PC = c.pc
		w := Unwind(Stack{Regs: c.regs, Copy: stack, Limit: 4096}, look)
		if w.Out != c.out || len(w.PCs) != len(c.want) || w.PCs[len(w.PCs)-1] != c.want[len(c.want)-1] {
			t.Errorf("%s: %v %q, frames %#x; want %v, frames %#x", c.name, w.Out, w.Reason, w.PCs, c.out, c.want)
		}
	}
}
