package loader

import (
	"bloop/internal/testenv"
	"testing"
)

// TestPLTARM64 pins aarch64's .plt stubs: after the 32-byte PLT0, one per
// 16 bytes, named by the JUMP_SLOT relocation of the GOT slot each loads;
// with DyninstPLTNames as hpcstruct names them (targ<addr>@plt), and only
// the stubs the code branches to (tmpl-aarch64-gcc12-O0's
// __gxx_personality_v0@plt at 0x15f0 is called by no one: the stub before
// runs on over it).
func TestPLTARM64(t *testing.T) {
	const dir = "../../shared/hpcstruct-refs-arch/bin/"
	type stub struct {
		addr, end uint64
		name      string
	}
	for _, tc := range []struct {
		bin     string
		dyninst bool
		want    []stub
		absent  []uint64
	}{
		{"ctrl-aarch64-gcc12-O2", false, []stub{{0x740, 0x750, "exit@plt"}, {0x750, 0x760, "__libc_start_main@plt"}, {0x7d0, 0x7e0, "fprintf@plt"}}, []uint64{0x720}},
		{"ctrl-aarch64-gcc12-O2", true, []stub{{0x740, 0x750, "targ740@plt"}, {0x7d0, 0x7e0, "targ7d0@plt"}}, []uint64{0x720}},
		{"tmpl-aarch64-gcc12-O0", false, []stub{{0x15e0, 0x15f0, "__cxa_end_catch@plt"}, {0x15f0, 0x1600, "__gxx_personality_v0@plt"}}, nil},
		{"tmpl-aarch64-gcc12-O0", true, []stub{{0x15e0, 0x1600, "targ15e0@plt"}, {0x1600, 0x1610, "targ1600@plt"}}, []uint64{0x15f0}},
	} {
		bin := dir + tc.bin
		testenv.Shared(t, bin)

		img, err := Open(bin, Options{DyninstPLTNames: tc.dyninst})
		if err != nil {
			t.Fatal(err)
		}
		stubs := map[uint64]*Func{}
		for _, f := range img.Funcs {
			if f.PLT {
				stubs[f.Addr] = f
			}
		}
		for _, w := range tc.want {
			f := stubs[w.addr]
			if f == nil || f.Name != w.name || f.End != w.end {
				t.Errorf("%s (Dyninst names %v): stub at %#x is %+v, want %s [%#x, %#x)", tc.bin, tc.dyninst, w.addr, f, w.name, w.addr, w.end)
			}
		}
		for _, a := range tc.absent {
			if f := stubs[a]; f != nil {
				t.Errorf("%s (Dyninst names %v): stub %s at %#x, want none", tc.bin, tc.dyninst, f.Name, a)
			}
		}
	}
}
