package procs

import (
	"encoding/binary"
	"reflect"
	"testing"

	"bloop/loader"
)

// asm assembles x86-64 machine code given as bytes, with rel32 and rel8
// branches to labels resolved at the end.
type asm struct {
	org    uint64
	b      []byte
	labels map[string]uint64
	fixes  []fix
}

type fix struct {
	at, next int // offset of the displacement; offset after the instruction
	size     int // 1 or 4
	label    string
}

func newAsm(org uint64, labels map[string]uint64) *asm {
	a := &asm{org: org, labels: map[string]uint64{}}
	for k, v := range labels {
		a.labels[k] = v
	}
	return a
}

func (a *asm) label(name string) *asm      { a.labels[name] = a.org + uint64(len(a.b)); return a }
func (a *asm) raw(b ...byte) *asm          { a.b = append(a.b, b...); return a }
func (a *asm) call(to string) *asm         { return a.rel(to, 4, 0xe8) }
func (a *asm) jmp(to string) *asm          { return a.rel(to, 4, 0xe9) }
func (a *asm) jcc(op byte, to string) *asm { return a.rel(to, 1, op) } // short jcc: 0x70+cc
func (a *asm) ret() *asm                   { return a.raw(0xc3) }

// align pads with int3 to a multiple of 16.
func (a *asm) align() *asm {
	for (a.org+uint64(len(a.b)))%16 != 0 {
		a.raw(0xcc)
	}
	return a
}

func (a *asm) rel(to string, size int, op ...byte) *asm {
	a.raw(op...)
	at := len(a.b)
	a.raw(make([]byte, size)...)
	a.fixes = append(a.fixes, fix{at, len(a.b), size, to})
	return a
}

func (a *asm) code(t *testing.T) []byte {
	for _, f := range a.fixes {
		to, ok := a.labels[f.label]
		if !ok {
			t.Fatalf("no label %s", f.label)
		}
		d := int64(to) - int64(a.org) - int64(f.next)
		if f.size == 1 {
			a.b[f.at] = byte(int8(d))
		} else {
			binary.LittleEndian.PutUint32(a.b[f.at:], uint32(int32(d)))
		}
	}
	return a.b
}

// TestRules checks the inference rules on small stripped programs: which
// code after a return, jump or call that does not return starts a
// procedure. Each program's procedures are f and g (and cold for the hot
// and cold case); everything else belongs to one of them.
func TestRules(t *testing.T) {
	const plt = 0x500 // _Unwind_Resume@plt, which does not return
	var (
		pushRBP   = []byte{0x55}
		movRBPRSP = []byte{0x48, 0x89, 0xe5}
		popRBP    = []byte{0x5d}
		pushRBX   = []byte{0x53}
		popRBX    = []byte{0x5b}
		movRBXRAX = []byte{0x48, 0x89, 0xc3}
		xorEAX    = []byte{0x31, 0xc0}
		movEAXESI = []byte{0x89, 0xf0}
		movESIEDI = []byte{0x89, 0xfe}
		testEAX   = []byte{0x85, 0xc0}
		pushR15   = []byte{0x41, 0x57}
		popR15    = []byte{0x41, 0x5f}
		jne, ja   = byte(0x75), byte(0x77)
	)
	g := func(a *asm) *asm { return a.align().label("g").raw(pushRBP...).raw(movRBPRSP...).raw(popRBP...).ret() }
	cases := []struct {
		name string
		prog func(a *asm) *asm
		want []string
	}{
		{"landing pad after a call that does not return", func(a *asm) *asm {
			return g(a.label("f").raw(pushRBX...).call("unwind").raw(movRBXRAX...).call("unwind"))
		}, []string{"f", "g"}},
		{"cleanup pad that tests before it resumes", func(a *asm) *asm {
			// The pad's first instruction computes (no inherited rax): only
			// the _Unwind_Resume its code reaches tells it (padReach).
			a.label("f").raw(pushRBX...).call("unwind").raw(xorEAX...).raw(testEAX...).jcc(jne, "y")
			return g(a.raw(xorEAX...).label("y").call("unwind"))
		}, []string{"f", "g"}},
		{"cleanup pads that run through each other (gcc -O0)", func(a *asm) *asm {
			a.label("f").raw(pushRBX...).call("unwind").raw(xorEAX...).jmp("p3")
			return g(a.raw(xorEAX...).label("p3").raw(testEAX...).call("unwind"))
		}, []string{"f", "g"}},
		{"procedure that begins with a conditional jump", func(a *asm) *asm {
			// aarch64's is_odd begins with cbnz; its own branch's interval
			// must not protect its entry.
			a.label("f").raw(xorEAX...).ret().label("odd").jcc(jne, "x").ret()
			return g(a.label("x").raw(xorEAX...).ret())
		}, []string{"f", "odd", "g"}},
		{"epilogue reached by a jump", func(a *asm) *asm {
			a.label("f").raw(pushRBX...).raw(testEAX...).jcc(jne, "cp").jmp("epi")
			return g(a.label("cp").call("unwind").label("epi").raw(popRBX...).ret())
		}, []string{"f", "g"}},
		{"block after the return that jumps back", func(a *asm) *asm {
			a.label("f").jmp("l2").label("l0").raw(movEAXESI...).raw(testEAX...).jcc(jne, "l0")
			return g(a.label("l1").ret().label("l2").raw(movESIEDI...).jmp("l1"))
		}, []string{"f", "g"}},
		{"hot part jumping back into its cold part", func(a *asm) *asm {
			a.label("cold").raw(xorEAX...).label("x").call("unwind")
			return a.align().label("f").raw(pushR15...).raw(testEAX...).jcc(jne, "out").jmp("x").label("out").raw(popR15...).ret()
		}, []string{"cold", "f"}},
		{"hot part jumping back into a branch of its cold part", func(a *asm) *asm {
			a.label("cold").raw(testEAX...).jcc(jne, "y").raw(xorEAX...).label("y").call("unwind")
			return a.align().label("f").raw(pushR15...).raw(testEAX...).jcc(jne, "out").jmp("y").label("out").raw(popR15...).ret()
		}, []string{"cold", "f"}},
		{"jump table with its lea hoisted", func(a *asm) *asm {
			a.label("f").raw(0x48, 0x8d, 0x15).rel("table", 4) // lea rdx,[rip+table]
			for range 10 {
				a.raw(0x90)
			}
			a.raw(0x83, 0xfe, 0x02).jcc(ja, "def")                              // cmp esi,2; ja def
			a.raw(0x48, 0x63, 0x04, 0xb2).raw(0x48, 0x01, 0xd0).raw(0xff, 0xe0) // movsxd rax,[rdx+rsi*4]; add rax,rdx; jmp rax
			a.label("def").raw(xorEAX...).ret()
			for _, c := range []string{"c0", "c1", "c2"} {
				a.label(c).raw(0xb8, 1, 0, 0, 0).ret() // mov eax,1; ret
			}
			return g(a)
		}, []string{"f", "g"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := c.prog(newAsm(0x1000, map[string]uint64{"unwind": plt, "table": 0x3000}))
			text := a.code(t)
			var table []byte
			for _, l := range []string{"c0", "c1", "c2"} {
				if to, ok := a.labels[l]; ok {
					table = binary.LittleEndian.AppendUint32(table, uint32(int32(int64(to)-0x3000)))
				}
			}
			img := loader.FromSections(loader.AMD64, []*loader.Section{
				{Name: ".plt", Addr: plt, Data: make([]byte, 16)},
				{Name: ".text", Addr: 0x1000, Data: text},
			}, []*loader.Section{{Name: ".rodata", Addr: 0x3000, Data: table}})
			img.Funcs = []*loader.Func{{Name: "_Unwind_Resume@plt", Aliases: []string{"_Unwind_Resume@plt"}, Addr: plt, End: plt + 16, PLT: true, Sized: true}}
			names := map[uint64]string{}
			for _, n := range c.want {
				names[a.labels[n]] = n
			}
			var got []string
			for _, p := range Find(img, Options{}).Procs {
				if p.Lo >= 0x1000 {
					n, ok := names[p.Lo]
					if !ok {
						n = p.Name()
					}
					got = append(got, n)
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("procedures %v, want %v", got, c.want)
			}
		})
	}
}
