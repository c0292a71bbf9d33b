package loader

import (
	"bloop/internal/testenv"
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// declNamesSrc has the two shapes: an explicitly instantiated template
// constructor (a concrete entry whose abstract origin declares a lambda's
// and a local class's members, with linkage names), and a member template
// defined out of class (a concrete entry with a specification, whose local
// class is among its own children).
const declNamesSrc = `
template <class T> struct Once {
  T n;
  Once(T k);
};
template <class T> Once<T>::Once(T k) {
  auto reset = [this] { n = 0; };
  struct Guard {
    decltype(reset) *f;
    ~Guard() { (*f)(); }
  };
  Guard g{&reset};
  n = k;
}
template struct Once<int>;
struct Str {
  template <class I> int build(I b, I e);
};
template <class I> int Str::build(I b, I e) {
  struct Local {
    int *p;
    Local(int *q) : p(q) {}
    ~Local() { *p = 0; }
  };
  int x = 1;
  { Local l(&x); }
  for (; b != e; ++b) x += *b;
  return x;
}
int main() {
  Once<int> o(3);
  Str s;
  int a[3] = {1, 2, 3};
  return o.n + s.build(a, a + 3);
}
`

// TestDyninstDeclNames: the names of the code-less members declared below
// a procedure's abstract origin join its names, those of its own children
// do not, nor do members with code of their own; without the option none
// are read.
func TestDyninstDeclNames(t *testing.T) {
	testenv.Need(t, "g++")
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "decl.cc"), filepath.Join(dir, "decl")
	if err := os.WriteFile(src, []byte(declNamesSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("g++", "-O0", "-g", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	img, err := Open(bin, Options{DyninstDeclNames: true})
	if err != nil {
		t.Fatal(err)
	}
	ctor := subprogramOf(t, img, "_ZN4OnceIiEC2Ei")
	for _, want := range []string{"_ZZN4OnceIiEC4EiEN5GuardD4Ev", "_ZZN4OnceIiEC4EiENUlvE_D4Ev"} {
		if !slices.Contains(ctor.DyninstDeclNames, want) {
			t.Errorf("Once<int>::Once: %q lacks %s", ctor.DyninstDeclNames, want)
		}
	}
	// The lambda's operator() and Guard's destructor have code: their
	// names are their own functions'.
	for _, not := range []string{"_ZZN4OnceIiEC4EiENKUlvE_clEv", "_ZZN4OnceIiEC4EiEN5GuardD2Ev"} {
		if slices.Contains(ctor.DyninstDeclNames, not) {
			t.Errorf("Once<int>::Once: %q has %s", ctor.DyninstDeclNames, not)
		}
	}
	if b := subprogramOf(t, img, "_ZN3Str5buildIPiEEiT_S2_"); len(b.DyninstDeclNames) != 0 {
		t.Errorf("Str::build, whose local class is its own child: %q", b.DyninstDeclNames)
	}
	plain, err := Open(bin, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := subprogramOf(t, plain, "_ZN4OnceIiEC2Ei").DyninstDeclNames; n != nil {
		t.Errorf("without the option: %q", n)
	}
}

// TestDyninstDeclNamesLibstdcxx checks the rule where real hpcstruct shows
// it (../shared/hpcstruct-real): once_flag::_Prepare_execution's
// constructor at 0xbad6c is named after its lambda's destructor, which its
// abstract origin declares; basic_string::_M_construct<char*>, whose local
// _Guard is its own child, keeps its symbol.
func TestDyninstDeclNamesLibstdcxx(t *testing.T) {
	const lib = "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"
	f, err := elf.Open(testenv.NeedFile(t, lib, "libstdc++6-12-dbg"))
	if err != nil {
		t.Fatal(err)
	}

	id := hex.EncodeToString(BuildID(f))
	f.Close()
	if id != "4ab8ef0cdee0f9b3900d2b90425bb328b39cfccb" {
		t.Skipf("%s: build-id %s, not the reference's", lib, id)
	}
	img, err := Open(lib, Options{DyninstDeclNames: true, SkipDescriptors: true})
	if err != nil {
		t.Fatal(err)
	}
	const dtor = "_ZZNSt9once_flag18_Prepare_executionC4IZSt9call_onceIMSt6threadFvvEJPS3_EEvRS_OT_DpOT0_EUlvE_EERS8_ENUlvE_D4Ev"
	if sp := img.SubprogramAt(0xbad6c); sp == nil || !slices.Contains(sp.DyninstDeclNames, dtor) {
		t.Errorf("0xbad6c: %v, want %s among the names", sp, dtor)
	}
	if sp := img.SubprogramAt(0x16c678); sp == nil || len(sp.DyninstDeclNames) != 0 {
		t.Errorf("0x16c678 (_M_construct<char*>): %v", sp)
	}
}

// subprogramOf is the DWARF procedure at symbol name's address.
func subprogramOf(t *testing.T, img *Image, name string) *Subprogram {
	t.Helper()
	for _, f := range img.Funcs {
		if slices.Contains(f.Aliases, name) {
			if sp := img.SubprogramAt(f.Addr); sp != nil {
				return sp
			}
			t.Fatalf("%s at %#x: no subprogram", name, f.Addr)
		}
	}
	t.Fatalf("no symbol %s", name)
	return nil
}
