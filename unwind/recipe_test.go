package unwind

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"bloop/loader"
)

// A tiny assembler for the test programs: fixed encodings, plus jumps and
// calls to labels (rel8) or to absolute addresses "@0x..." (rel32).
var encodings = map[string][]byte{
	"push rbp": {0x55}, "pop rbp": {0x5d}, "push rbx": {0x53}, "pop rbx": {0x5b},
	"push r12": {0x41, 0x54}, "pop r12": {0x41, 0x5c},
	"push rdi": {0x57}, "pop rdi": {0x5f}, "mov eax,58": {0xb8, 0x3a, 0, 0, 0}, "syscall": {0x0f, 0x05},
	"mov rbp,rsp": {0x48, 0x89, 0xe5}, "mov rsp,rbp": {0x48, 0x89, 0xec},
	"sub rsp,16": {0x48, 0x83, 0xec, 0x10}, "add rsp,16": {0x48, 0x83, 0xc4, 0x10},
	"sub rsp,rax": {0x48, 0x29, 0xc4}, "and rsp,-16": {0x48, 0x83, 0xe4, 0xf0},
	"lea rsp,[rbp-8]": {0x48, 0x8d, 0x65, 0xf8}, "lea rbp,[rsp+8]": {0x48, 0x8d, 0x6c, 0x24, 0x08},
	"mov [rsp+8],rbp": {0x48, 0x89, 0x6c, 0x24, 0x08}, "mov rbp,[rsp+8]": {0x48, 0x8b, 0x6c, 0x24, 0x08},
	"mov rbp,rdi": {0x48, 0x89, 0xfd},
	"leave":       {0xc9}, "ret": {0xc3}, "test edi,edi": {0x85, 0xff}, "xor eax,eax": {0x31, 0xc0},
	"nop": {0x90}, "int3": {0xcc}, "endbr64": {0xf3, 0x0f, 0x1e, 0xfa}, "jmp rax": {0xff, 0xe0},
	"call rax": {0xff, 0xd0},
}

type line struct {
	label string // "L:" defines a label at this instruction
	ins   string
	want  string // expected rule before the instruction: "sp+8", "bp+16", "sp+16 bp@-16", or "" for don't care
}

func assemble(t *testing.T, base uint64, prog []line) ([]byte, map[string]uint64, []uint64) {
	t.Helper()
	size := func(ins string) int {
		op, arg, _ := strings.Cut(ins, " ")
		switch {
		case (op == "jmp" || op == "je" || op == "jne") && strings.HasPrefix(arg, "@"):
			return map[string]int{"jmp": 5, "je": 6, "jne": 6}[op]
		case op == "jmp" && arg != "rax", op == "je", op == "jne":
			return 2
		case op == "call" && arg != "rax":
			return 5
		}
		b, ok := encodings[ins]
		if !ok {
			t.Fatalf("no encoding for %q", ins)
		}
		return len(b)
	}
	labels := map[string]uint64{}
	addrs := make([]uint64, len(prog))
	a := base
	for i, l := range prog {
		if l.label != "" {
			labels[l.label] = a
		}
		addrs[i] = a
		a += uint64(size(l.ins))
	}
	var out []byte
	for i, l := range prog {
		op, arg, _ := strings.Cut(l.ins, " ")
		end := addrs[i] + uint64(size(l.ins))
		target := func() uint64 {
			if strings.HasPrefix(arg, "@") {
				var v uint64
				fmt.Sscanf(arg[1:], "0x%x", &v)
				return v
			}
			v, ok := labels[arg]
			if !ok {
				t.Fatalf("no label %q", arg)
			}
			return v
		}
		switch {
		case op == "call" && arg != "rax", (op == "jmp" || op == "je" || op == "jne") && strings.HasPrefix(arg, "@"):
			rel := uint32(int32(int64(target()) - int64(end)))
			var pre []byte
			switch op {
			case "call":
				pre = []byte{0xe8}
			case "jmp":
				pre = []byte{0xe9}
			case "je":
				pre = []byte{0x0f, 0x84}
			case "jne":
				pre = []byte{0x0f, 0x85}
			}
			out = binary.LittleEndian.AppendUint32(append(out, pre...), rel)
		case op == "jmp" && arg != "rax", op == "je", op == "jne":
			rel := int64(target()) - int64(end)
			if rel < -128 || rel > 127 {
				t.Fatalf("jump to %s out of rel8 range", arg)
			}
			out = append(out, map[string]byte{"jmp": 0xeb, "je": 0x74, "jne": 0x75}[op], byte(int8(rel)))
		default:
			out = append(out, encodings[l.ins]...)
		}
	}
	return out, labels, addrs
}

func ruleString(r Recipe) string {
	s := fmt.Sprintf("%s%+d", r.CFA, r.CFAOff)
	if r.BPSaved {
		s += fmt.Sprintf(" bp@%d", r.BPOff)
	}
	if r.RAInDI {
		s += " ra=di"
	}
	return s
}

// TestRecipes checks the recipe before every instruction of small
// hand-assembled procedures, one per frame-relevant situation.
func TestRecipes(t *testing.T) {
	const base = 0x1000
	tests := []struct {
		name  string
		funcs map[string]uint64 // extra symbols (label -> size; 0: to the next)
		prog  []line
	}{
		{"vfork: the return address popped into rdi over the system call", nil, []line{
			{"", "pop rdi", "sp+8"},
			{"", "mov eax,58", "sp+0 ra=di"},
			{"", "syscall", "sp+0 ra=di"},
			{"", "push rdi", "sp+0 ra=di"},
			{"", "ret", "sp+8"},
		}},
		{"frame pointer, leave", nil, []line{
			{"", "push rbp", "sp+8"},
			{"", "mov rbp,rsp", "sp+16 bp@-16"},
			{"", "sub rsp,16", "bp+16 bp@-16"},
			{"", "call @0x5000", "bp+16 bp@-16"},
			{"", "leave", "bp+16 bp@-16"},
			{"", "ret", "sp+8"},
		}},
		{"frame pointer, mov rsp,rbp epilogue", nil, []line{
			{"", "push rbp", "sp+8"},
			{"", "mov rbp,rsp", "sp+16 bp@-16"},
			{"", "sub rsp,16", "bp+16 bp@-16"},
			{"", "mov rsp,rbp", "bp+16 bp@-16"},
			{"", "pop rbp", "bp+16 bp@-16"},
			{"", "ret", "sp+8"},
		}},
		{"alloca and realignment under a frame pointer", nil, []line{
			{"", "push rbp", "sp+8"},
			{"", "mov rbp,rsp", "sp+16 bp@-16"},
			{"", "push rbx", "bp+16 bp@-16"},
			{"", "sub rsp,rax", "bp+16 bp@-16"},
			{"", "and rsp,-16", "bp+16 bp@-16"},
			{"", "lea rsp,[rbp-8]", "bp+16 bp@-16"},
			{"", "pop rbx", "bp+16 bp@-16"},
			{"", "pop rbp", "bp+16 bp@-16"},
			{"", "ret", "sp+8"},
		}},
		{"frameless, early return reached by a branch", nil, []line{
			{"", "push rbx", "sp+8"},
			{"", "sub rsp,16", "sp+16"},
			{"", "test edi,edi", "sp+32"},
			{"", "je L", "sp+32"},
			{"", "call @0x5000", "sp+32"},
			{"", "add rsp,16", "sp+32"},
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
			{"L", "xor eax,eax", "sp+32"},
			{"", "add rsp,16", "sp+32"},
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
		}},
		{"canonical frame after a mid-procedure return", nil, []line{
			{"", "push rbx", "sp+8"},
			{"", "push r12", "sp+16"},
			{"", "sub rsp,16", "sp+24"},
			{"", "call @0x5000", "sp+40"},
			{"", "add rsp,16", "sp+40"},
			{"", "pop r12", "sp+24"},
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
			{"", "call rax", "sp+40"}, // reached by an indirect jump: the canonical frame
			{"", "add rsp,16", "sp+40"},
			{"", "pop r12", "sp+24"},
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
		}},
		{"the check at ret repairs a wrong canonical guess", nil, []line{
			{"", "push rbx", "sp+8"},
			{"", "test edi,edi", "sp+16"},
			{"", "jne L", "sp+16"},
			{"", "sub rsp,16", "sp+16"},
			{"", "call @0x5000", "sp+32"},
			{"", "add rsp,16", "sp+32"},
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
			{"", "xor eax,eax", "sp+8"}, // canonical guess sp+16 was wrong: ret below has one pop fewer
			{"", "ret", "sp+8"},
			{"L", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
		}},
		{"a backward jump repairs a guess", nil, []line{
			{"", "push rbx", "sp+8"},
			{"L", "sub rsp,16", "sp+16"},
			{"", "call @0x5000", "sp+32"},
			{"", "test edi,edi", "sp+32"},
			{"", "add rsp,16", "sp+32"},
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
			{"", "push rbx", "sp+8"}, // a cold block that jumps back to L with sp+16
			{"", "push rbx", "sp+16"},
			{"", "pop rbx", "sp+24"},
			{"", "jmp L", "sp+16"},
		}},
		{"a guess confirmed by a known target repairs later guesses", nil, []line{
			{"", "test edi,edi", "sp+8"}, // a branch before the prologue: the canonical guess is the entry state
			{"", "je E", "sp+8"},
			{"", "push rbx", "sp+8"},
			{"", "push r12", "sp+16"},
			{"", "jmp L", "sp+24"},
			{"K", "xor eax,eax", "sp+24"}, // after a jump: a guess, right, and confirmed at L
			{"L", "test edi,edi", "sp+24"},
			{"", "jne K", "sp+24"},
			{"", "jmp rax", "sp+24"},
			{"", "pop r12", "sp+24"},
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
			{"", "xor eax,eax", "sp+24"}, // a jump-table target after the ret: guessed sp+8, repaired by the jump back to K
			{"", "jmp K", "sp+24"},
			{"E", "ret", "sp+8"},
		}},
		{"a guessed jump into a named procedure does not set its entry", map[string]uint64{"f": 0, "g": 0}, []line{
			{"f", "test edi,edi", "sp+8"},
			{"", "je E", "sp+8"},
			{"", "push rbx", "sp+8"},
			{"", "push r12", "sp+16"},
			{"", "jmp rax", "sp+24"},
			{"", "jmp g", "sp+8"}, // reached by the jump table: a guess, which the tail call corrects
			{"E", "ret", "sp+8"},
			{"g", "push rbx", "sp+8"}, // g's entry: a call's state, whatever the guess said
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
		}},
		// python3.11's PyUnicode_FromStringAndSize: LTO's cold part of
		// member_get, entered from a jump table only, ends in a tail call.
		// Scanned from the entry state its pops took SP above the CFA,
		// and its jump gave the callee's entry that frame: every sample
		// in the callee failed ("caller's frame is not above the callee's").
		{"a cold part entered by a jump table: its tail call settles its frame and not the callee's", map[string]uint64{"f": 0, "f.cold": 0, "g": 0}, []line{
			{"f", "push rbx", "sp+8"},
			{"", "push rbp", "sp+16"},
			{"", "jmp rax", "sp+24 bp@-24"},
			{"f.cold", "pop rbp", "sp+24"},
			{"", "pop rbx", "sp+16"},
			{"", "jmp g", "sp+8"},
			{"g", "push rbx", "sp+8"},
			{"", "test edi,edi", "sp+16"},
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
		}},
		{"the tail callee asked first", map[string]uint64{"g": 0, "f": 0, "f.cold": 0}, []line{
			{"g", "push rbx", "sp+8"},
			{"", "test edi,edi", "sp+16"},
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
			{"f", "push rbx", "sp+8"},
			{"", "push rbp", "sp+16"},
			{"", "jmp rax", "sp+24 bp@-24"},
			{"f.cold", "pop rbp", "sp+24"},
			{"", "pop rbx", "sp+16"},
			{"", "jmp g", "sp+8"},
		}},
		{"a jump to a function's entry never shifts its frame", map[string]uint64{"h": 0, "g": 0}, []line{
			{"h", "push rbx", "sp+8"},
			{"", "jmp g", "sp+16"}, // not a tail call the scan can make sense of
			{"g", "push rbx", "sp+8"},
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
		}},
		// python3.11's compiler_visit_expr1: push; push; jmp to a call
		// shared by several cases. The code after that jump, a case of
		// its own, took the pushed arguments for its frame.
		{"arguments pushed before a jump are not the next block's frame", nil, []line{
			{"", "push rbx", "sp+8"},
			{"", "sub rsp,16", "sp+16"},
			{"L", "test edi,edi", "sp+32"},
			{"", "jne E", "sp+32"},
			{"", "jmp rax", "sp+32"},
			{"", "push rdi", "sp+32"}, // a jump-table target
			{"", "push rdi", "sp+40"},
			{"", "jmp C", "sp+48"},
			{"", "xor eax,eax", "sp+32"}, // another: the canonical frame
			{"", "jmp rax", "sp+32"},
			{"C", "call @0x5000", "sp+48"},
			{"", "add rsp,16", "sp+48"},
			{"", "jmp L", "sp+32"},
			{"E", "add rsp,16", "sp+32"},
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
		}},
		// python3.11's sre_ucs4_match.lto_priv.0.cold: a cold part
		// entered from its hot part's jump table only, that jumps back.
		{"a cold part entered by a jump table takes its frame from the jump back", map[string]uint64{"foo": 0, "foo.cold": 0}, []line{
			{"foo", "push rbx", "sp+8"},
			{"", "sub rsp,16", "sp+16"},
			{"", "test edi,edi", "sp+32"},
			{"", "jmp rax", "sp+32"},
			{"K", "add rsp,16", "sp+32"},
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
			{"foo.cold", "xor eax,eax", "sp+32"},
			{"", "call @0x5000", "sp+32"},
			{"", "jmp K", "sp+32"},
		}},
		// A sample at _dl_runtime_resolve_xsavec+1 failed: the resolver is
		// entered with the link map and the relocation index pushed.
		{"the dynamic linker's lazy-binding resolver", map[string]uint64{"_dl_runtime_resolve_xsavec": 0}, []line{
			{"_dl_runtime_resolve_xsavec", "push rbx", "sp+24"},
			{"", "pop rbx", "sp+32"},
			{"", "add rsp,16", "sp+24"},
			{"", "jmp rax", "sp+8"},
		}},
		{"a guard before the prologue does not hide the canonical frame", nil, []line{
			{"", "test edi,edi", "sp+8"}, // shrink-wrapping: return at once when there is nothing to do
			{"", "je E", "sp+8"},
			{"", "push rbx", "sp+8"},
			{"", "push r12", "sp+16"},
			{"", "sub rsp,16", "sp+24"},
			{"", "call @0x5000", "sp+40"},
			{"", "jmp rax", "sp+40"},
			{"", "add rsp,16", "sp+40"},
			{"", "pop r12", "sp+24"},
			{"", "pop rbx", "sp+16"},
			{"", "jmp @0x6000", "sp+8"},   // a tail call
			{"", "call @0x5000", "sp+40"}, // a jump-table target: the frame after the prologue
			{"", "add rsp,16", "sp+40"},
			{"", "pop r12", "sp+24"},
			{"", "pop rbx", "sp+16"},
			{"", "jmp @0x6000", "sp+8"}, // another tail call: no ret checks the guess
			{"E", "ret", "sp+8"},
		}},
		{"a cold part that jumps back into its hot part, the hot part asked first", map[string]uint64{"foo": 0, "foo.cold": 0}, []line{
			{"foo", "push rbx", "sp+8"},
			{"", "sub rsp,16", "sp+16"},
			{"L", "test edi,edi", "sp+32"},
			{"", "jne foo.cold", "sp+32"},
			{"", "add rsp,16", "sp+32"},
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
			{"foo.cold", "call @0x5000", "sp+32"}, // foo's frame, though the cold part is scanned on the way to foo's
			{"", "jmp L", "sp+32"},
		}},
		{"tail calls", nil, []line{
			{"", "push rbx", "sp+8"},
			{"", "test edi,edi", "sp+16"},
			{"", "je L", "sp+16"},
			{"", "pop rbx", "sp+16"},
			{"", "jmp @0x5000", "sp+8"},
			{"L", "pop rbx", "sp+16"},
			{"", "jmp rax", "sp+8"},
		}},
		{"caller's BP saved by a store, rbp as a plain register", nil, []line{
			{"", "sub rsp,16", "sp+8"},
			{"", "mov [rsp+8],rbp", "sp+24"},
			{"", "mov rbp,rdi", "sp+24 bp@-16"},
			{"", "lea rbp,[rsp+8]", "sp+24 bp@-16"},
			{"", "mov rbp,[rsp+8]", "sp+24 bp@-16"},
			{"", "add rsp,16", "sp+24"},
			{"", "ret", "sp+8"},
		}},
		{"endbr64 and padding", nil, []line{
			{"", "endbr64", "sp+8"},
			{"", "push rbx", "sp+8"},
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
			{"", "nop", ""},
			{"", "int3", ""},
		}},
		{"hot part branches into its cold part", map[string]uint64{"foo": 0, "foo.cold": 0}, []line{
			{"foo", "push rbx", "sp+8"},
			{"", "sub rsp,16", "sp+16"},
			{"", "test edi,edi", "sp+32"},
			{"", "jne foo.cold", "sp+32"},
			{"", "add rsp,16", "sp+32"},
			{"", "pop rbx", "sp+16"},
			{"", "ret", "sp+8"},
			{"foo.cold", "xor eax,eax", "sp+32"},
			{"", "call @0x5000", "sp+32"},
			{"", "int3", ""},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, labels, addrs := assemble(t, base, tc.prog)
			img := loader.FromSections(loader.AMD64, []*loader.Section{{Name: ".text", Addr: base, Data: code}}, nil)
			img.Funcs = []*loader.Func{{Name: "f", Aliases: []string{"f"}, Addr: base, End: base + uint64(len(code))}}
			for name := range tc.funcs {
				if labels[name] == base {
					img.Funcs[0].Name, img.Funcs[0].Aliases = name, []string{name}
					continue
				}
				img.Funcs = append(img.Funcs, &loader.Func{Name: name, Aliases: []string{name}, Addr: labels[name]})
			}
			fixEnds(img, base+uint64(len(code)))
			m := NewModule(img)
			for i, l := range tc.prog {
				if l.want == "" {
					continue
				}
				r, ok := m.RecipeAt(addrs[i])
				if got := ruleString(r); !ok || got != l.want {
					t.Errorf("%#x %-16s: got %s (ok=%v), want %s", addrs[i], l.ins, got, ok, l.want)
				}
			}
			if t.Failed() {
				for i := range m.Procs() {
					for _, r := range m.Recipes(i) {
						t.Log(r)
					}
				}
			}
		})
	}
}

// fixEnds bounds each test symbol by the next, as the loader does.
func fixEnds(img *loader.Image, end uint64) {
	fs := img.Funcs
	for i := range fs {
		for j := range fs {
			if fs[j].Addr > fs[i].Addr && (fs[i].End == 0 || fs[j].Addr < fs[i].End || fs[i].End == end) {
				fs[i].End = fs[j].Addr
			}
		}
		if fs[i].End == 0 || fs[i].End < fs[i].Addr {
			fs[i].End = end
		}
	}
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j].Addr < fs[j-1].Addr; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}

func TestStep(t *testing.T) {
	stack := map[uint64]uint64{0x7f00: 0xdead, 0x7f08: 0x401234, 0x7f10: 0xbeef}
	mem := func(a uint64) (uint64, bool) { v, ok := stack[a]; return v, ok }
	tests := []struct {
		r    Recipe
		f    Frame
		want Frame
		err  error
	}{
		{Recipe{CFA: RegSP, CFAOff: 16, RAOff: -8}, Frame{PC: 1, SP: 0x7f00, BP: 7}, Frame{PC: 0x401234, SP: 0x7f10, BP: 7}, nil},
		{Recipe{CFA: RegBP, CFAOff: 16, RAOff: -8, BPSaved: true, BPOff: -16}, Frame{PC: 1, SP: 0x7e00, BP: 0x7f00}, Frame{PC: 0x401234, SP: 0x7f10, BP: 0xdead}, nil},
		{Recipe{CFA: RegSP, CFAOff: 64, RAOff: -8}, Frame{SP: 0x7f00}, Frame{}, ErrTruncated},
		{Recipe{CFA: RegBP, CFAOff: 16, RAOff: -8}, Frame{SP: 0x7f00, BP: 0x10}, Frame{}, ErrBadFrame},
		{Recipe{}, Frame{SP: 0x7f00}, Frame{}, ErrNoRecipe},
		// vfork: the return address in the sampled rdi, the caller's SP
		// the current one; unknown rdi (a caller's frame) cannot unwind.
		{Recipe{CFA: RegSP, CFAOff: 0, RAInDI: true}, Frame{PC: 1, SP: 0x7f00, BP: 7, DI: 0x401777, HasDI: true}, Frame{PC: 0x401777, SP: 0x7f00, BP: 7}, nil},
		{Recipe{CFA: RegSP, CFAOff: 0, RAInDI: true}, Frame{PC: 1, SP: 0x7f00, BP: 7}, Frame{}, ErrBadFrame},
	}
	for i, tc := range tests {
		got, err := tc.r.Step(tc.f, mem)
		if got != tc.want || err != tc.err {
			t.Errorf("%d: Step = %+v, %v; want %+v, %v", i, got, err, tc.want, tc.err)
		}
	}
}
