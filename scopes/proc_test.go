package scopes

import (
	"os/exec"
	"sort"
	"strings"
	"testing"

	"bloop/internal/testenv"
	"bloop/loader"
	"bloop/structure"
)

// TestDemangle pins names as hpcstruct (the GNU demangler) writes them.
func TestDemangle(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"main", "main"},
		{"_ZSt10_ConstructI3VecIdLi3EEJEEvPT_DpOT0_", "std::_Construct<Vec<double, 3>>(Vec<double, 3>*)"},
		{"_ZSt10_ConstructIiJEEvPT_DpOT0_", "std::_Construct<int>(int*)"},
		{"_ZNSt12_Vector_baseIiSaIiEED1Ev", "std::_Vector_base<int, std::allocator<int> >::~_Vector_base()"},
		{"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE12_M_constructIPKcEEvT_S8_St20forward_iterator_tag",
			"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_construct<char const*>(char const*, char const*, std::forward_iterator_tag)"},
		{"_ZNSt8_Rb_treeINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt4pairIKS5_iESt10_Select1stIS8_ESt4lessIS5_ESaIS8_EE8_M_eraseEPSt13_Rb_tree_nodeIS8_E.isra.0",
			"std::_Rb_tree<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, int>, std::_Select1st<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, int> >, std::less<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >, std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, int> > >::_M_erase(std::_Rb_tree_node<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, int> >*) [clone .isra.0]"},
	} {
		if got := Demangle(c.in); got != c.want {
			t.Errorf("Demangle(%s)\\n got %s\\nwant %s", c.in, got, c.want)
		}
	}
}

// knownDemangleDiffs are names on which github.com/ianlancetaylor/demangle
// and GNU's demangler disagree: substitutions inside `sr` unresolved names
// are numbered differently.
var knownDemangleDiffs = map[string]bool{
	"_ZSt4swapIiENSt9enable_ifIXsrSt6__and_IJSt6__not_ISt15__is_tuple_likeIT_EESt21is_move_constructibleIS4_ESt18is_move_assignableIS4_EEE5valueEvE4typeERS4_SE_": true,
	"_ZSt4swapIiENSt9enable_ifIXsr6__and_ISt6__not_ISt15__is_tuple_likeIT_EESt21is_move_constructibleIS3_ESt18is_move_assignableIS3_EEE5valueEvE4typeERS3_SC_":    true,
	"_ZSt9__fill_a1IPiiEN9__gnu_cxx11__enable_ifIXsr11__is_scalarIT0_EE7__valueEvE6__typeET_S6_RKS3_":                                                             true,
	"_ZSt9__fill_a1IP3VecIdLi3EES1_EN9__gnu_cxx11__enable_ifIXntsr11__is_scalarIT0_EE7__valueEvE6__typeET_S8_RKS5_":                                               true,
}

// TestDemangleOracle compares our demangling with c++filt (GNU's, which
// hpcstruct uses) on every C++ name of the reference binaries.
func TestDemangleOracle(t *testing.T) {
	cxxfilt := testenv.Need(t, "c++filt")
	bins := testenv.SharedGlob(t, "../../shared/hpcstruct-refs/bin/tmpl-*")

	seen := map[string]bool{}
	var names []string
	for _, b := range bins {
		img, err := loader.Open(b, loader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		add := func(n string) {
			if strings.HasPrefix(n, "_Z") && !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
		for _, f := range img.Funcs {
			add(strings.TrimSuffix(f.Name, "@plt"))
		}
		for _, p := range img.Procs {
			add(p.LinkName)
			var walk func([]*loader.Inline)
			walk = func(ins []*loader.Inline) {
				for _, in := range ins {
					add(in.LinkName)
					walk(in.Children)
				}
			}
			walk(p.Inlines)
		}
	}
	sort.Strings(names)
	cmd := exec.Command(cxxfilt)
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(want) != len(names) {
		t.Fatalf("c++filt returned %d lines for %d names", len(want), len(names))
	}
	bad := 0
	for i, n := range names {
		got, _ := demangleGNU(n)
		if got == want[i] || knownDemangleDiffs[n] {
			continue
		}
		bad++
		if bad <= 10 {
			t.Errorf("%s\n got %s\nwant %s", n, got, want[i])
		}
	}
	t.Logf("%d names compared with c++filt, %d known differences", len(names), len(knownDemangleDiffs))
}

func TestCutReturnType(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"std::enable_if<__and_<std::__not_<std::__is_tuple_like<int> >, std::is_move_constructible<int>, std::is_move_assignable<int> >::value, void>::type std::swap<int>(int&, int&)", "std::swap<int>(int&, int&)"},
		{"void std::_Construct<Vec<double, 3>>(Vec<double, 3>*)", "std::_Construct<Vec<double, 3>>(Vec<double, 3>*)"},
		{"int& std::__get_helper<0ul, int&&>(std::_Tuple_impl<0ul, int&&>&) [clone .isra.0]", "std::__get_helper<0ul, int&&>(std::_Tuple_impl<0ul, int&&>&) [clone .isra.0]"},
		{"bool Foo<int>::get<long>(long) const", "Foo<int>::get<long>(long) const"},
		{"bool std::operator< <int>(int const&, int const&)", "std::operator< <int>(int const&, int const&)"},
		{"no parameters", "no parameters"},
	} {
		if got := cutReturnType(c.in); got != c.want {
			t.Errorf("cutReturnType(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestGNUNames: with c++filt's spelling known, the name hpcstruct shows is
// GNU's (the Go demangler misnumbers these substitutions).
func TestGNUNames(t *testing.T) {
	const m = "_ZSt4swapIiENSt9enable_ifIXsr6__and_ISt6__not_ISt15__is_tuple_likeIT_EESt21is_move_constructibleIS3_ESt18is_move_assignableIS3_EEE5valueEvE4typeERS3_SC_"
	n := NewNames(map[string]string{m: "std::enable_if<__and_<std::__not_<std::__is_tuple_like<int> >, std::is_move_constructible<int>, std::is_move_assignable<int> >::value, void>::type std::swap<int>(int&, int&)"})
	if got, ok := n.demangle(m); !ok || got != "std::swap<int>(int&, int&)" {
		t.Errorf("GNU name: %q %v", got, ok)
	}
	var none *Names
	if got, _ := none.demangle(m); got == "std::swap<int>(int&, int&)" {
		t.Errorf("the built-in demangler got this one right: drop the c++filt path")
	}
}

// TestHpcstructProcNames pins the names compat mode gives where hpcstruct
// decides by Dyninst's view rather than by the binary: the "[module]"
// suffix by Dyninst's classification (a library that can be run, as
// libc.so.6, has it), and a function ParseAPI found by a call, with no
// symbol, as "<unknown procedure>" (a stub when at most 32 bytes).
func TestHpcstructProcNames(t *testing.T) {
	lib := &loader.Image{Name: "libz.so.1.2.13", Shared: true}
	runnable := &loader.Image{Name: "libc.so.6"}
	exe := &loader.Image{Name: "prog", DyninstExec: true}
	sym := &loader.Func{Name: "crc32", Addr: 0x47c0, End: 0x4890}
	found := &loader.Func{Name: "targ4b10", Addr: 0x4b10, End: 0x50d0, Found: true}
	short := &loader.Func{Name: "targ12560", Addr: 0x12560, End: 0x12570, Found: true}
	start := &loader.Func{Name: "_start", Addr: 0x1040, End: 0x1080, Found: true}
	stub := &loader.Func{Name: "free@plt", Addr: 0x26360, End: 0x26370, PLT: true}
	long := &loader.Func{Name: "free@plt", Addr: 0xaf530, End: 0xaf560, PLT: true}
	compat, plain := &Names{Hpcstruct: true}, &Names{}
	for _, c := range []struct {
		names        *Names
		img          *loader.Image
		fn           *loader.Func
		pretty, link string
	}{
		{compat, lib, sym, "crc32 [libz.so.1.2.13]", "crc32"},
		{compat, runnable, sym, "crc32 [libc.so.6]", "crc32"},
		{plain, runnable, sym, "crc32", ""},
		{compat, exe, sym, "crc32", ""},
		{compat, lib, found, "<unknown procedure> 0x4b10 [libz.so.1.2.13]", "targ4b10"},
		{compat, exe, found, "<unknown procedure> 0x4b10 [prog]", "targ4b10"},
		{plain, lib, found, "targ4b10 [libz.so.1.2.13]", "targ4b10"},
		{compat, lib, short, "targ12560@plt [libz.so.1.2.13]", "targ12560@plt"},
		{compat, exe, start, "_start", ""},
		{compat, runnable, stub, "free@plt [libc.so.6]", "free@plt"},
		{compat, exe, long, "free", ""},
		{plain, exe, long, "free@plt", ""},
	} {
		pretty, link := c.names.procName(c.img, c.fn, nil)
		if pretty != c.pretty || link != c.link {
			t.Errorf("Hpcstruct %v, %s, %s: %q, %q; want %q, %q", c.names.Hpcstruct, c.img.Name, c.fn.Name, pretty, link, c.pretty, c.link)
		}
	}
}

// TestFoundProcedureGaps: hpcstruct fills the gaps of a procedure a symbol
// names but not those of one ParseAPI found by a call (libz.so.1's
// targ4b10 lists no statement for its nop padding at 0x4ee7).
func TestFoundProcedureGaps(t *testing.T) {
	img := &loader.Image{Sections: []*loader.Section{{Name: ".text", Addr: 0x1000, Data: make([]byte, 0x20)}}, Lines: &loader.LineTable{}}
	for _, c := range []struct {
		found, hpcstruct bool
		gaps             int
	}{{false, true, 1}, {true, false, 1}, {true, true, 0}} {
		fn := &loader.Func{Name: "targ1000", Addr: 0x1000, End: 0x1020, Found: c.found}
		if n := len(Gaps(Input{Img: img, Func: fn, Hpcstruct: c.hpcstruct})); n != c.gaps {
			t.Errorf("found %v, Hpcstruct %v: %d gaps, want %d", c.found, c.hpcstruct, n, c.gaps)
		}
	}
}

// TestHpcstructCalleeNames: compat mode names an inlined callee by
// Dyninst's name (loader.Callee.DyninstName), demangled where it demangles
// and as it is where that fails; the default mode by the linkage name the
// entry that names it first has, demangled, else its DWARF name.
func TestHpcstructCalleeNames(t *testing.T) {
	glibc := &loader.Callee{Name: "__woverflow", DyninstName: "__GI___woverflow"}
	ctor := &loader.Callee{Name: "vector", DyninstName: "vector"}
	cxx := &loader.Callee{Name: "swap", LinkName: "_ZSt4swapIiEvRT_S1_", DyninstName: "_ZSt4swapIiEvRT_S1_"}
	for _, c := range []struct {
		hpcstruct bool
		in        *loader.Callee
		want      string
	}{
		{true, glibc, "__GI___woverflow"}, {false, glibc, "__woverflow"},
		{true, ctor, "vector"}, {false, ctor, "vector"},
		{true, cxx, "std::swap<int>(int&, int&)"}, {false, cxx, "std::swap<int>(int&, int&)"},
	} {
		if got := calleeName(&Names{Hpcstruct: c.hpcstruct}, c.in); got != c.want {
			t.Errorf("Hpcstruct %v, %s: %q, want %q", c.hpcstruct, c.in.Name, got, c.want)
		}
	}
}

// TestCalleeNameMIPS: Dyninst 12.3 does not read DW_AT_MIPS_linkage_name,
// so in compat mode a callee that has only that linkage name is named by
// its DW_AT_name (loader.Callee.DyninstName), demangled where it
// demangles: nvcc 11.8 writes the plain name there, 11.2 the mangled one.
// The default mode takes the linkage name, whichever attribute holds it.
func TestCalleeNameMIPS(t *testing.T) {
	link := "_ZN47_INTERNAL_558b7056_16_inlines_loops_cu_d1d8cd7d9f4_inlineEv"
	long := "_INTERNAL_558b7056_16_inlines_loops_cu_d1d8cd7d::f4_inline()"
	compat := NewNames(nil)
	compat.Hpcstruct = true
	for _, c := range []struct {
		name   string
		callee loader.Callee
		names  *Names
		want   string
	}{
		{"nvcc 11.8", loader.Callee{Name: "f4_inline", LinkName: link, DyninstName: "f4_inline"}, compat, "f4_inline"},
		{"nvcc 11.2", loader.Callee{Name: link, LinkName: link, DyninstName: link}, compat, long},
		{"default mode", loader.Callee{Name: "f4_inline", LinkName: link, DyninstName: "f4_inline"}, NewNames(nil), long},
		{"DW_AT_linkage_name", loader.Callee{Name: "f4_inline", LinkName: link, DyninstName: link}, compat, long},
	} {
		if got := calleeName(c.names, &c.callee); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestProcFile: a procedure is filed under its entry's line; a line-0 row
// names its file for hpcstruct (clang -g1's transform in
// licm-clang14-O2g1), not otherwise; without a row, the DWARF procedure's
// declaring file, else the binary.
func TestProcFile(t *testing.T) {
	img := &loader.Image{Name: "prog", Lines: loader.NewLineTable([]loader.LineRow{
		{Addr: 0x100, End: 0x110, File: "/src/a.c", Line: 0},
		{Addr: 0x110, End: 0x120, File: "/src/a.c", Line: 14},
	})}
	decl := &loader.Subprogram{DeclFile: "/src/decl.c"}
	for _, tc := range []struct {
		name   string
		entry  uint64
		sub    *loader.Subprogram
		compat bool
		want   string
	}{
		{"line 0, hpcstruct", 0x100, nil, true, "/src/a.c"},
		{"line 0", 0x100, nil, false, "[prog]"},
		{"line 0, a DWARF procedure", 0x100, decl, false, "/src/decl.c"},
		{"line 14", 0x110, nil, false, "/src/a.c"},
		{"no row, hpcstruct", 0x200, nil, true, "[prog]"},
		{"no row, a DWARF procedure, hpcstruct", 0x200, decl, true, "/src/decl.c"},
	} {
		if got := ProcFile(Input{Img: img, Func: &loader.Func{Addr: tc.entry}, Sub: tc.sub, Hpcstruct: tc.compat}); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestDWARFAliasDeclNames: with DWARF aliases (compat mode) a procedure's
// names also include the linkage names Dyninst's DWARF walk adds from the
// declarations below its abstract origin (loader.Subprogram.
// DyninstDeclNames), and the longest name wins (libstdc++'s
// once_flag::_Prepare_execution constructor at 0xbad6c); a name a symbol
// contains is refused, and the default mode keeps the symbol.
func TestDWARFAliasDeclNames(t *testing.T) {
	const (
		c1   = "_ZN4OnceIiEC1Ei"
		c2   = "_ZN4OnceIiEC2Ei"
		dtor = "_ZZN4OnceIiEC4EiEN5GuardD4Ev"
	)
	img := &loader.Image{Name: "prog", DyninstExec: true}
	fn := &loader.Func{Name: c1, Aliases: []string{c1, c2}, Addr: 0x1148, End: 0x1180}
	at := []structure.Range{{Lo: 0x1148, Hi: 0x1180}}
	compat, plain := &Names{Hpcstruct: true, DWARFAliases: true}, &Names{}
	for _, c := range []struct {
		names *Names
		decls []string
		link  string
	}{
		{compat, []string{"_ZZN4OnceIiEC4EiENUlvE_C4Ev", dtor}, dtor},
		{compat, nil, c1},
		{compat, []string{"N4OnceIiEC1Ei"}, c1}, // contained in a symbol
		{plain, []string{dtor}, c1},
	} {
		sub := &loader.Subprogram{LinkName: c2, Ranges: at, DyninstDeclNames: c.decls}
		pretty, link := c.names.procName(img, fn, sub)
		if link != c.link {
			t.Errorf("%v, %q: link %q (%q), want %q", c.names.DWARFAliases, c.decls, link, pretty, c.link)
		}
	}
}

// TestProcLineNoRow: where no line row covers a procedure's entry (gcc's
// .cold parts), hpcstruct probes the addresses after it (getProcLineMap)
// and takes the line of the first probe a row covers (libstdc++'s operator
// new(nothrow) .cold: 51); an entry row of line 0 stays 0, a row past the
// procedure's end is not its, and the default mode keeps 0.
func TestProcLineNoRow(t *testing.T) {
	img := &loader.Image{Name: "prog", Lines: loader.NewLineTable([]loader.LineRow{
		{Addr: 0x105, End: 0x10a, File: "/src/new_opnt.cc", Line: 51},
		{Addr: 0x10a, End: 0x111, File: "/src/new_opnt.cc", Line: 50},
		{Addr: 0x120, End: 0x128, File: "/src/a.c", Line: 0},
		{Addr: 0x128, End: 0x130, File: "/src/a.c", Line: 9},
		{Addr: 0x200, End: 0x208, File: "/src/b.c", Line: 7},
		// Probed 2 bytes apart: the one-byte row at 0x303 is stepped over.
		{Addr: 0x303, End: 0x304, File: "/src/c.c", Line: 10},
		{Addr: 0x304, End: 0x310, File: "/src/c.c", Line: 11},
		// After 8 misses the step doubles: the row at +18 is stepped
		// over, the hit at +48 is searched again at step 2.
		{Addr: 0x412, End: 0x413, File: "/src/d.c", Line: 5},
		{Addr: 0x42f, End: 0x440, File: "/src/d.c", Line: 30},
	})}
	for _, tc := range []struct {
		name     string
		lo, hi   uint64
		compat   bool
		line     int
		wantFile string
	}{
		{"no row at the entry, hpcstruct", 0x100, 0x111, true, 51, "/src/new_opnt.cc"},
		{"no row at the entry", 0x100, 0x111, false, 0, "[prog]"},
		{"a line-0 row at the entry, hpcstruct", 0x120, 0x130, true, 0, "/src/a.c"},
		{"the first row is past the end, hpcstruct", 0x180, 0x190, true, 0, "[prog]"},
		{"a one-byte row between probes, hpcstruct", 0x300, 0x310, true, 11, "/src/c.c"},
		{"a row the doubled step skips, hpcstruct", 0x400, 0x440, true, 30, "/src/d.c"},
	} {
		line, file := procLine(Input{Img: img, Func: &loader.Func{Addr: tc.lo, End: tc.hi}, Hpcstruct: tc.compat})
		if line != tc.line || file != tc.wantFile {
			t.Errorf("%s: %d %s, want %d %s", tc.name, line, file, tc.line, tc.wantFile)
		}
	}
}
