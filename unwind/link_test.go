package unwind

import (
	"encoding/binary"
	"testing"

	"bloop/loader"
)

// linkCase is one procedure of 4-byte words and the recipe expected
// before each (String form, "" for don't care).
type linkCase struct {
	name  string
	words []uint32
	want  []string
}

// TestRecipesLinkRegister: the recipes of aarch64 and ppc64le prologues
// and epilogues, word by word (encodings from the cross assemblers): a
// leaf keeps the return address in LR, a frame record, a frame over 4 KiB
// built in a register, ppc64's LR copy stored before the frame is
// allocated and reloaded after it is released.
func TestRecipesLinkRegister(t *testing.T) {
	const base = 0x10000
	cases := []struct {
		arch loader.Arch
		linkCase
	}{
		{loader.ARM64, linkCase{"leaf", []uint32{
			0x8b010000, // add x0, x0, x1
			0xd65f03c0, // ret
		}, []string{"cfa=sp+0 ra=lr bp=bp", "cfa=sp+0 ra=lr bp=bp"}}},
		{loader.ARM64, linkCase{"frame record", []uint32{
			0xa9be7bfd, // stp x29, x30, [sp, #-32]!
			0x910003fd, // mov x29, sp
			0x94000010, // bl
			0xa8c27bfd, // ldp x29, x30, [sp], #32
			0xd65f03c0, // ret
		}, []string{"cfa=sp+0 ra=lr bp=bp", "cfa=sp+32 ra=[cfa-24] bp=[cfa-32]", "cfa=sp+32 ra=[cfa-24] bp=[cfa-32]",
			"cfa=sp+32 ra=[cfa-24] bp=[cfa-32]", "cfa=sp+0 ra=lr bp=bp"}}},
		{loader.ARM64, linkCase{"large frame", []uint32{
			0xa9bf7bfd, // stp x29, x30, [sp, #-16]!
			0xd286da0c, // mov x12, #0x36d0
			0xcb2c63ff, // sub sp, sp, x12
			0x94000010, // bl
		}, []string{"", "cfa=sp+16 ra=[cfa-8] bp=[cfa-16]", "cfa=sp+16 ra=[cfa-8] bp=[cfa-16]", "cfa=sp+14048 ra=[cfa-8] bp=[cfa-16]"}}},
		{loader.PPC64LE, linkCase{"prologue and epilogue", []uint32{
			0x7c0802a6, // mflr r0
			0xf8010010, // std r0,16(r1)
			0xf821ffc1, // stdu r1,-64(r1)
			0x48000011, // bl
			0x60000000, // nop
			0x38210040, // addi r1,r1,64
			0xe8010010, // ld r0,16(r1)
			0x7c0803a6, // mtlr r0
			0x4e800020, // blr
		}, []string{"cfa=sp+0 ra=lr bp=bp", "cfa=sp+0 ra=lr bp=bp", "cfa=sp+0 ra=lr bp=bp", "cfa=sp+64 ra=[cfa+16] bp=bp",
			"cfa=sp+64 ra=[cfa+16] bp=bp", "cfa=sp+64 ra=[cfa+16] bp=bp", "cfa=sp+0 ra=[cfa+16] bp=bp", "cfa=sp+0 ra=[cfa+16] bp=bp",
			"cfa=sp+0 ra=lr bp=bp"}}},
	}
	for _, c := range cases {
		t.Run(string(c.arch)+"/"+c.name, func(t *testing.T) {
			var code []byte
			for _, w := range c.words {
				code = binary.LittleEndian.AppendUint32(code, w)
			}
			img := loader.FromSections(c.arch, []*loader.Section{{Name: ".text", Addr: base, Data: code}}, nil)
			img.Funcs = []*loader.Func{{Name: "f", Aliases: []string{"f"}, Addr: base, End: base + uint64(len(code)), Sized: true}}
			m := NewModule(img)
			for i, want := range c.want {
				pc := base + uint64(4*i)
				r, ok := m.RecipeAt(pc)
				got := "unknown"
				if ok {
					got = r.String()
					got = got[len(got)-len(want):]
				}
				if want != "" && got != want {
					t.Errorf("%#x: got %s, want %s (%v)", pc, got, want, r)
				}
			}
		})
	}
}

// TestStepLinkRegister: a step by LR (only the sampled frame's is known),
// a pointer-authenticated return address stripped to its address, ppc64's
// LR save word in the caller's frame before the callee allocates its own,
// and the back chain.
func TestStepLinkRegister(t *testing.T) {
	stack := map[uint64]uint64{0x7f10: 0x401234, 0x7f00: 0x7f40, 0x7f50: 0x402000, 0x7f40: 0}
	mem := func(a uint64) (uint64, bool) { v, ok := stack[a]; return v, ok }
	cases := []struct {
		name string
		r    Recipe
		f    Frame
		want Frame
		err  error
	}{
		{"ra in lr", Recipe{CFA: RegSP, RAInLR: true}, Frame{SP: 0x7f00, LR: 0x400100, HasLR: true}, Frame{PC: 0x400100, SP: 0x7f00}, nil},
		{"ra in lr, not known", Recipe{CFA: RegSP, RAInLR: true}, Frame{SP: 0x7f00}, Frame{}, ErrBadFrame},
		{"ppc64 LR save word, no frame yet", Recipe{CFA: RegSP, RAOff: 16}, Frame{SP: 0x7f00}, Frame{PC: 0x401234, SP: 0x7f00}, nil},
		{"aarch64 signed return address", Recipe{CFA: RegSP, CFAOff: 0x18, RAOff: -8, RABits: 48}, Frame{SP: 0x7ef8}, Frame{PC: 0x401234, SP: 0x7f10}, nil},
	}
	stack[0x7f08] = 0x5a5a000000401234 // a PAC in the high bits
	for _, c := range cases {
		got, err := c.r.Step(c.f, mem)
		if got != c.want || err != c.err {
			t.Errorf("%s: got %+v, %v; want %+v, %v", c.name, got, err, c.want, c.err)
		}
	}
	// The back chain: [SP] is the caller's SP, its LR save word at +16.
	got, err := BackChainStep(Frame{SP: 0x7f00}, mem)
	if want := (Frame{PC: 0x402000, SP: 0x7f40}); got != want || err != nil {
		t.Errorf("back chain: got %+v, %v; want %+v", got, err, want)
	}
	if _, err := BackChainStep(Frame{SP: 0x7f40}, mem); err != ErrBadFrame {
		t.Errorf("null back chain: got %v, want ErrBadFrame", err)
	}
}
