package loader

import (
	"bloop/internal/testenv"
	"debug/elf"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const ppcRefs = "../../shared/hpcstruct-refs-arch/bin/"

func ppcRefBins(t *testing.T) []string {
	bins := testenv.SharedGlob(t, ppcRefs+"*-ppc64le-*")

	return bins
}

// TestPPC64Stubs: every call stub the linker named (<hex>.plt_call.<name>)
// is found from its code alone and named <name>@plt after the JUMP_SLOT
// relocation of the .plt slot it loads; the TOC base is .TOC.'s and
// functions keep their ELFv2 local entries.
func TestPPC64Stubs(t *testing.T) {
	for _, bin := range ppcRefBins(t) {
		img, err := Open(bin, Options{})
		if err != nil {
			t.Fatal(err)
		}
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		syms, _ := f.Symbols()
		f.Close()
		stubs := 0
		for _, s := range syms {
			switch {
			case s.Name == ".TOC.":
				if img.TOC != s.Value {
					t.Errorf("%s: TOC %#x, want %#x", bin, img.TOC, s.Value)
				}
			case len(s.Name) > 8 && strings.HasPrefix(s.Name[8:], ".plt_call."):
				name, _, _ := strings.Cut(s.Name[8+len(".plt_call."):], "@")
				fn := img.FuncAt(s.Value)
				if fn == nil || fn.Addr != s.Value || !fn.PLT || fn.Name != name+"@plt" || fn.End != s.Value+16 {
					t.Errorf("%s: stub %s: got %+v", filepath.Base(bin), s.Name, fn)
				}
				stubs++
			case elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Name == "main":
				if fn := img.FuncAt(s.Value); fn == nil || fn.LocalEntry != s.Value+8 {
					t.Errorf("%s: main's local entry: got %+v", filepath.Base(bin), fn)
				}
			}
		}
		if stubs == 0 {
			t.Errorf("%s: no stub symbols", bin)
		}
	}
}

// TestDyninstStubs: the stubs as hpcstruct shows them. In ctrl-ppc64le-
// gcc12-O2 __libc_start_main's stub (0x760), which only _start's b
// reaches, is no procedure, and calloc's before it runs on to strtol's
// (0x780): 64 bytes, too long for hpcstruct's "@plt".
func TestDyninstStubs(t *testing.T) {
	bin := ppcRefs + "ctrl-ppc64le-gcc12-O2"
	img, err := Open(bin, Options{DyninstStubs: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]struct {
		name string
		end  uint64
	}{0x6e0: {"__gmon_start__@plt", 0x700}, 0x740: {"calloc", 0x780}, 0x780: {"strtol@plt", 0x7a0}, 0x820: {"exit@plt", 0x840}}
	for _, fn := range img.Funcs {
		if fn.Addr == 0x760 {
			t.Errorf("an uncalled stub is a procedure: %+v", fn)
		}
		if w, ok := want[fn.Addr]; ok && (fn.Name != w.name || fn.End != w.end || !fn.PLT) {
			t.Errorf("%#x: %s to %#x, want %s to %#x", fn.Addr, fn.Name, fn.End, w.name, w.end)
		}
	}
	// Calls reach the local entries of these procedures, where Dyninst
	// makes functions of its own.
	for _, a := range []uint64{0xc98, 0xde8, 0xea8} {
		found := false
		for _, e := range img.DyninstEntries {
			found = found || e == a
		}
		if !found {
			t.Errorf("local entry %#x not in %#x", a, img.DyninstEntries)
		}
	}
}

// TestDyninstStubsStripped: without the linker's stub symbols Dyninst
// names a stub targ<addr>, while the default view still reads its name
// from the code.
func TestDyninstStubsStripped(t *testing.T) {
	strip := testenv.Need(t, "powerpc64le-linux-gnu-strip")
	out := filepath.Join(t.TempDir(), "ctrl")
	if err := exec.Command(strip, "-o", out, ppcRefs+"ctrl-ppc64le-gcc12-O2").Run(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dyninst bool
		name    string
	}{{false, "strtol@plt"}, {true, "targ780@plt"}} {
		img, err := Open(out, Options{DyninstStubs: tc.dyninst})
		if err != nil {
			t.Fatal(err)
		}
		if fn := img.FuncAt(0x780); fn == nil || fn.Name != tc.name {
			t.Errorf("dyninst %v: %+v, want %s", tc.dyninst, fn, tc.name)
		}
	}
}
