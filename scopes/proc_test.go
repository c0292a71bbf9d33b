package scopes

import (
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"bloop/loader"
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
	cxxfilt, err := exec.LookPath("c++filt")
	if err != nil {
		t.Skip("c++filt not installed")
	}
	bins, _ := filepath.Glob("../../shared/hpcstruct-refs/bin/tmpl-*")
	if len(bins) == 0 {
		t.Skip("reference binaries not present")
	}
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

// TestCalleeNameMIPS: a callee named by DW_AT_MIPS_linkage_name takes its
// DW_AT_name, demangled, in compat mode (Dyninst 12.3 does not read the
// MIPS attribute), and its linkage name otherwise.
func TestCalleeNameMIPS(t *testing.T) {
	link := "_ZN47_INTERNAL_558b7056_16_inlines_loops_cu_d1d8cd7d9f4_inlineEv"
	long := "_INTERNAL_558b7056_16_inlines_loops_cu_d1d8cd7d::f4_inline()"
	compat := NewNames(nil)
	compat.NoMIPSCallees = true
	for _, c := range []struct {
		callee loader.Callee
		names  *Names
		want   string
	}{
		{loader.Callee{Name: "f4_inline", LinkName: link, MIPSLinkage: true}, compat, "f4_inline"}, // nvcc 11.8
		{loader.Callee{Name: link, LinkName: link, MIPSLinkage: true}, compat, long},               // nvcc 11.2
		{loader.Callee{Name: "f4_inline", LinkName: link, MIPSLinkage: true}, NewNames(nil), long}, // default mode
		{loader.Callee{Name: "f4_inline", LinkName: link}, compat, long},                           // DW_AT_linkage_name
	} {
		if got := calleeName(c.names, &c.callee); got != c.want {
			t.Errorf("%+v (compat %v): %q, want %q", c.callee, c.names.NoMIPSCallees, got, c.want)
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
		if got := ProcFile(img, &loader.Func{Addr: tc.entry}, tc.sub, tc.compat); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
