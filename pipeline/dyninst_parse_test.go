package pipeline

import (
	"slices"
	"strings"
	"testing"

	"bloop/dyninst"
	"bloop/loader"
	"bloop/structure"
)

// funcNamed returns img's procedure with symbol name n.
func funcNamed(t *testing.T, img *loader.Image, n string) *loader.Func {
	t.Helper()
	for _, f := range img.Funcs {
		for _, a := range f.Aliases {
			if a == n {
				return f
			}
		}
	}
	t.Fatalf("no procedure %s", n)
	return nil
}

// TestCompatFallOutAfterStub: stl-gcc12-O2nodebug's vector<double> copy
// constructor ends with a call through the stub of gcc 11's
// std::__throw_bad_array_new_length, which Dyninst 12.3 does not know never
// returns: in compat mode the call returns, the parse falls out through the
// padding into _Hashtable::clear, and clear is written empty, as hpcstruct
// writes them. The default mode knows better.
func TestCompatFallOutAfterStub(t *testing.T) {
	const bin = "../testdata/bin/stl-gcc12-O2nodebug"
	const clear = "_ZNSt10_HashtableINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt4pairIKS5_iESaIS8_ENSt8__detail10_Select1stESt8equal_toIS5_ESt4hashIS5_ENSA_18_Mod_range_hashingENSA_20_Default_ranged_hashENSA_20_Prime_rehash_policyENSA_17_Hashtable_traitsILb1ELb0ELb1EEEE5clearEv"
	for _, compat := range []bool{false, true} {
		img, err := Open(bin, loader.Options{}, Options{Dyninst: policyIf(compat)})
		if err != nil {
			t.Fatal(err)
		}
		stub := funcNamed(t, img, "_ZSt28__throw_bad_array_new_lengthv@plt")
		if got := policyIf(compat).NoReturnAddrs(img)[stub.Addr]; got == compat {
			t.Errorf("compat %v: the stub never returns: %v", compat, got)
		}
		pl := newPlan(img, Options{Dyninst: policyIf(compat)}, 1)
		ctor := funcNamed(t, img, "_ZNSt6vectorIdSaIdEEC2ERKS1_")
		cl := funcNamed(t, img, clear)
		if _, got := pl.claimed[cl.Addr]; got != compat {
			t.Errorf("compat %v: clear claimed %v", compat, got)
		}
		if compat {
			if !pl.parse.Facts(1).RunsOn[ctor.Addr] {
				t.Errorf("the copy constructor's parse does not run on")
			}
			// _M_deallocate_buckets follows clear's ret.
			next := funcNamed(t, img, "_ZNSt10_HashtableINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt4pairIKS5_iESaIS8_ENSt8__detail10_Select1stESt8equal_toIS5_ESt4hashIS5_ENSA_18_Mod_range_hashingENSA_20_Default_ranged_hashENSA_20_Prime_rehash_policyENSA_17_Hashtable_traitsILb1ELb0ELb1EEEE21_M_deallocate_bucketsEv")
			if _, got := pl.claimed[next.Addr]; got {
				t.Errorf("_M_deallocate_buckets claimed")
			}
		}
	}
}

// TestCompatSelfTailCall: gcc turns __merge_adaptive's and
// __merge_without_buffer's last recursive call into a jump back to the
// entry; Dyninst takes it for a tail call (the entry is called, and on
// x86-64 the jump follows the epilogue's pops), so in compat mode the
// procedure has no loop headed at its entry. callTargets knows the
// entries direct calls reach.
func TestCompatSelfTailCall(t *testing.T) {
	for _, bin := range []string{"../testdata/bin/stl-gcc12-O2nodebug", "../testdata/bin-arm64/stl-gcc12-O2", "../testdata/bin-ppc64le/stl-gcc12-O2"} {
		for _, compat := range []bool{false, true} {
			img, err := Open(bin, loader.Options{}, Options{Dyninst: policyIf(compat)})
			if err != nil {
				t.Fatal(err)
			}
			pl := newPlan(img, Options{Dyninst: policyIf(compat)}, 1)
			n := 0
			for i, fn := range img.Funcs {
				if !strings.Contains(fn.Name, "__merge_without_buffer") && !strings.Contains(fn.Name, "__merge_adaptive") {
					continue
				}
				n++
				g, forest, err := pl.graph(i)
				if err != nil {
					t.Fatal(err)
				}
				atEntry := false
				for _, l := range forest.Loops {
					atEntry = atEntry || g.Blocks[l.Header].Start == fn.Addr || g.Blocks[l.Header].Start == fn.LocalEntry
				}
				if atEntry == compat {
					t.Errorf("%s, compat %v: loop at the entry of %s: %v", bin, compat, fn.Name, atEntry)
				}
				if compat {
					entry := fn.Addr
					if fn.LocalEntry != 0 {
						entry = fn.LocalEntry
					}
					if !pl.parse.Called(entry) || pl.parse.Called(entry+4) {
						t.Errorf("%s: %s: called(entry) %v, called(entry+4) %v", bin, fn.Name, pl.parse.Called(entry), pl.parse.Called(entry+4))
					}
				}
			}
			if n != 2 {
				t.Errorf("%s: %d procedures of the merges, want 2", bin, n)
			}
		}
	}
}

// TestClaimedGaps: a procedure another one falls into is written with its
// gaps only: in stl-gcc12-O3 vector<double>'s copy constructor runs into
// __heap_select, whose two padding blocks no parse reaches (after a jmp and
// after the ret); hpcstruct files them under __heap_select, with their
// lines and inline contexts (__make_heap's line 352, line 1633).
func TestClaimedGaps(t *testing.T) {
	img, err := Open("../testdata/bin/stl-gcc12-O3", loader.Options{}, Options{Dyninst: dyninst.Hpcstruct})
	if err != nil {
		t.Fatal(err)
	}
	pl := newPlan(img, Options{Dyninst: dyninst.Hpcstruct}, 1)
	hs := funcNamed(t, img, "_ZSt13__heap_selectIN9__gnu_cxx17__normal_iteratorIPdSt6vectorIdSaIdEEEENS0_5__ops15_Iter_less_iterEEvT_S9_S9_T0_")
	if _, ok := pl.claimed[hs.Addr]; !ok {
		t.Fatal("__heap_select not claimed")
	}
	for i, fn := range img.Funcs {
		if fn != hs {
			continue
		}
		p, probs := pl.proc(i)
		if len(probs) > 0 {
			t.Fatal(probs)
		}
		var got []structure.Range
		lines := map[int]bool{}
		var walk func(s *structure.Scope)
		walk = func(s *structure.Scope) {
			if s.Kind == structure.Stmt {
				got = append(got, s.Ranges...)
				lines[s.Line] = true
			}
			for _, c := range s.Children {
				walk(c)
			}
		}
		walk(p)
		want := []structure.Range{{Lo: 0x4217, Hi: 0x4220}, {Lo: 0x424b, Hi: 0x4250}}
		slices.SortFunc(got, func(a, b structure.Range) int { return int(a.Lo) - int(b.Lo) })
		if !slices.Equal(got, want) || !lines[352] || !lines[1633] {
			t.Errorf("statements %x lines %v, want %x on lines 352 and 1633", got, lines, want)
		}
	}
}

// TestGapOneStatement: in ppc64le stl-gcc12-O2 the traceback table after
// vector<Item>::_M_realloc_insert's call to __throw_length_error is a row
// of the call's line 1894 that starts where the DWARF range of the inlined
// _M_check_len ends; hpcstruct takes the gap's rows of one line for one
// statement, in _M_check_len, whose context it looks up at the first.
func TestGapOneStatement(t *testing.T) {
	img, err := Open("../testdata/bin-ppc64le/stl-gcc12-O2", loader.Options{}, Options{Dyninst: dyninst.Hpcstruct})
	if err != nil {
		t.Fatal(err)
	}
	pl := newPlan(img, Options{Dyninst: dyninst.Hpcstruct}, 1)
	fn := funcNamed(t, img, "_ZNSt6vectorI4ItemSaIS0_EE17_M_realloc_insertIJS0_EEEvN9__gnu_cxx17__normal_iteratorIPS0_S2_EEDpOT_")
	i := slices.Index(img.Funcs, fn)
	p, probs := pl.proc(i)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	var callee func(s *structure.Scope, in string) string
	callee = func(s *structure.Scope, in string) string {
		if s.Kind == structure.Alien && s.Name != "" && s.Name != "<inline>" {
			in = s.Name
		}
		if s.Kind == structure.Stmt {
			for _, r := range s.Ranges {
				if r.Lo <= 0x4e0c && 0x4e0c < r.Hi {
					return in
				}
			}
		}
		for _, c := range s.Children {
			if got := callee(c, in); got != "" {
				return got
			}
		}
		return ""
	}
	if got := callee(p, "(procedure)"); !strings.Contains(got, "_M_check_len") {
		t.Errorf("0x4e0c is in %q, want _M_check_len", got)
	}
}

// TestLoopLineOtherFile: hpcstruct's header line is the smallest line of
// the exit conditions in the header's file only. In arm64 tmpl-clang14-O2
// main's loop at 0x14a0 exits inside Rect::perimeter, inlined at line 66
// of a call file clang's DWARF 5 leaves as index 0 ("Unknown file" for
// Dyninst); the loop is main's, in tmpl.cpp, so hpcstruct finds no line.
func TestLoopLineOtherFile(t *testing.T) {
	img, err := Open("../testdata/bin-arm64/tmpl-clang14-O2", loader.Options{}, Options{Dyninst: dyninst.Hpcstruct})
	if err != nil {
		t.Fatal(err)
	}
	pl := newPlan(img, Options{Dyninst: dyninst.Hpcstruct}, 1)
	p, probs := pl.proc(slices.Index(img.Funcs, funcNamed(t, img, "main")))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	var loop *structure.Scope
	var walk func(s *structure.Scope)
	walk = func(s *structure.Scope) {
		if s.Kind == structure.Loop && s.Entry == 0x14a0 {
			loop = s
		}
		for _, c := range s.Children {
			walk(c)
		}
	}
	walk(p)
	if loop == nil || loop.Line != 0 || !strings.HasSuffix(loop.File, "tmpl.cpp") {
		t.Errorf("loop at 0x14a0: %+v, want tmpl.cpp line 0", loop)
	}
}

// TestFallOutWithoutDWARF: a procedure without a DWARF procedure of its own
// that falls out into the next ones (arm64 stl-clang14-O2's
// __clang_call_terminate: Dyninst does not know the std::terminate stub
// never returns) gets their inlined code as hpcstruct writes it, by their
// inline trees; the default mode does not fall out there.
func TestFallOutWithoutDWARF(t *testing.T) {
	img, err := Open("../testdata/bin-arm64/stl-clang14-O2", loader.Options{}, Options{Dyninst: dyninst.Hpcstruct})
	if err != nil {
		t.Fatal(err)
	}
	pl := newPlan(img, Options{Dyninst: dyninst.Hpcstruct}, 1)
	fn := funcNamed(t, img, "__clang_call_terminate")
	p, probs := pl.proc(slices.Index(img.Funcs, fn))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	callees := 0
	var walk func(s *structure.Scope)
	walk = func(s *structure.Scope) {
		if s.Kind == structure.Alien && s.Name != "" && s.Name != "<inline>" {
			callees++
		}
		for _, c := range s.Children {
			walk(c)
		}
	}
	walk(p)
	if pl.subs[slices.Index(img.Funcs, fn)] != nil || callees == 0 {
		t.Errorf("__clang_call_terminate: %d inlined callees, want those of the code it runs into", callees)
	}
}

// TestLoopUnknownSite: in libc.so.6's argp_hol, make_hol is inlined from a
// call site Dyninst cannot read, and so are the __option_is_end calls
// inside its loops; the loops' only exits are in those. hpcstruct locates
// the loops in make_hol, where no exit condition is, and takes the file
// of an inlined call at that level: "<unknown>", a file like any other
// for it, line 0 (scopes.inlKey.site).
func TestLoopUnknownSite(t *testing.T) {
	const libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	if buildIDOf(libc) != "93ac61ec5a8eb1396f9fbd350e3169a558528a40" {
		t.Skip("not the libc the facts are about")
	}
	img, err := Open(libc, loader.Options{}, Options{Dyninst: dyninst.Hpcstruct})
	if err != nil {
		t.Fatal(err)
	}
	pl := newPlan(img, Options{Dyninst: dyninst.Hpcstruct}, 2)
	p, _ := pl.proc(slices.Index(img.Funcs, funcNamed(t, img, "argp_hol")))
	found := 0
	var walk func(s *structure.Scope)
	walk = func(s *structure.Scope) {
		if s.Kind == structure.Loop && (s.Entry == 0x112536 || s.Entry == 0x1125a8) {
			found++
			if s.File != "<unknown>" || s.Line != 0 {
				t.Errorf("loop at %#x: %s:%d, want <unknown>:0", s.Entry, s.File, s.Line)
			}
		}
		for _, c := range s.Children {
			walk(c)
		}
	}
	walk(p)
	if found != 2 {
		t.Errorf("%d of make_hol's two loops found", found)
	}
}
