package diff

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"bloop/internal/structtest"
)

func TestParseClone(t *testing.T) {
	for _, c := range []struct {
		name, base, variant, parts string
	}{
		{"f", "f", "f", ""},
		{"f.constprop.0", "f", "f.constprop.0", ""},
		{"f.isra.0", "f", "f.isra.0", ""},
		{"f.part.0", "f", "f", ".part.0"},
		{"f.cold", "f", "f", ".cold"},
		{"f.cold.3", "f", "f", ".cold.3"},
		{"f.constprop.0.isra.0", "f", "f.constprop.0.isra.0", ""},
		{"f.part.0.constprop.0", "f", "f.constprop.0", ".part.0"},
		{"f.constprop.0.cold", "f", "f.constprop.0", ".cold"},
		{"comp_distance_value.part.0.isra.0", "comp_distance_value", "comp_distance_value.isra.0", ".part.0"},
		{"_Z3fooi.isra.0", "_Z3fooi", "_Z3fooi.isra.0", ""},
		{"MAIN__._omp_fn.0", "MAIN__", "MAIN__", "._omp_fn.0"},
		{"f.specialized.1", "f", "f.specialized.1", ""},
		// Renamings are not copies: the variant drops them.
		{"f.lto_priv.0", "f", "f", ""},
		{"f.llvm.1234567", "f", "f", ""},
		{"f.localalias", "f", "f", ""},
		{"fill.1", "fill", "fill", ""},
		// Not suffixes: the name stays whole.
		{"__x86.get_pc_thunk.bx", "__x86.get_pc_thunk.bx", "__x86.get_pc_thunk.bx", ""},
		{"f.part", "f.part", "f.part", ""},
		{"f.isra", "f.isra", "f.isra", ""},
		{".hidden", ".hidden", ".hidden", ""},
		{"f.", "f.", "f.", ""},
	} {
		got := parseClone(c.name)
		if got.base != c.base || got.variant != c.variant || got.parts != c.parts {
			t.Errorf("parseClone(%q) = %+v, want base %q variant %q parts %q", c.name, got, c.base, c.variant, c.parts)
		}
	}
}

func TestPrettyBase(t *testing.T) {
	for _, c := range [][2]string{
		{"f", "f"},
		{"f [libx.so]", "f"},
		{"f.constprop.0 [libx.so]", "f"},
		{"f.cold", "f"},
		{"word_counts[abi:cxx11](int) [clone .cold]", "word_counts[abi:cxx11](int)"},
		{"std::sort<int*>(int*, int*) [clone .isra.0] [clone .cold]", "std::sort<int*>(int*, int*)"},
		{"operator()(int) const", "operator()(int) const"},
	} {
		if got := prettyBase(c[0]); got != c[1] {
			t.Errorf("prettyBase(%q) = %q, want %q", c[0], got, c[1])
		}
	}
	for _, c := range [][2]string{
		{"f", "f"},
		{"__merge_adaptive<__gnu_cxx::__normal_iterator<Item*, std::vector<Item> >, long int, Item*, __gnu_cxx::__ops::_Iter_comp_iter<stable_by_weight(std::vector<Item>&)::<lambda(const Item&, const Item&)> > >", "__merge_adaptive"},
		{"std::__merge_adaptive<__gnu_cxx::__normal_iterator<Item*, std::vector<Item, std::allocator<Item> > >, long, Item*, __gnu_cxx::__ops::_Iter_comp_iter<stable_by_weight(std::vector<Item, std::allocator<Item> >&)::$_0> >(long, long)", "__merge_adaptive"},
		{"std::vector<double, std::allocator<double> >::begin() const", "begin"},
		{"Acc<double, 4>::operator()(int) const [clone .isra.0]", "operator()"},
		{"ns::f(int) [libx.so]", "f"},
	} {
		if got := shortName(c[0]); got != c[1] {
			t.Errorf("shortName(%q) = %q, want %q", c[0], got, c[1])
		}
	}
	for _, c := range [][2]string{{"targ1090@plt", "targ@plt"}, {"targ@plt", "targ@plt"}, {"memcpy@plt", "memcpy@plt"}, {"target@plt", "target@plt"}} {
		if got := stubName(c[0]); got != c[1] {
			t.Errorf("stubName(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

// proc is a hand-made procedure named ln at address lo with a loop at
// line loop (0: none) and the inlined calls of inl (callee names).
func handProc(ln string, lo int, loop int, inl ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<P n="%s" ln="%s" l="1" v="{[0x%x-0x%x)}">`, ln, ln, lo, lo+1)
	fmt.Fprintf(&b, `<S l="%d" v="{[0x%x-0x%x)}"/>`, lo>>4, lo, lo+4)
	if loop > 0 {
		fmt.Fprintf(&b, `<L l="%d" f="/src/x.c" v="{[0x%x-0x%x)}"><S l="%d" v="{[0x%x-0x%x)}"/></L>`, loop, lo+4, lo+5, loop, lo+4, lo+8)
	}
	for k, callee := range inl {
		a := lo + 16 + 8*k
		fmt.Fprintf(&b, `<A l="3" f="/src/x.c" v="{}"><A l="40" f="/src/x.c" n="%s" v="{}"><S l="41" v="{[0x%x-0x%x)}"/></A></A>`, callee, a, a+8)
	}
	b.WriteString(`</P>`)
	return b.String()
}

// TestFunctionStatuses: each decision a compiler can make about a whole
// function, on hand-made builds.
func TestFunctionStatuses(t *testing.T) {
	for _, c := range []struct {
		name    string
		a, b    string
		status  string
		also    []string
		callers []string
		namesA  []string
		namesB  []string
	}{
		{name: "renamed", a: handProc("f", 0x100, 10), b: handProc("f.constprop.0", 0x200, 10),
			status: ProcRenamed, namesB: []string{"f.constprop.0"}},
		{name: "cloned", a: handProc("f", 0x100, 10), b: handProc("f", 0x200, 10) + handProc("f.constprop.0", 0x300, 10),
			status: ProcCloned, namesB: []string{"f", "f.constprop.0"}},
		{name: "split", a: handProc("f", 0x100, 10), b: handProc("f", 0x200, 0) + handProc("f.cold", 0x300, 10),
			status: ProcSplit, namesB: []string{"f", "f.cold"}},
		{name: "joined", a: handProc("f.part.0", 0x100, 10), b: handProc("f", 0x200, 10),
			status: ProcJoined, namesA: []string{"f.part.0"}},
		{name: "renamed and split", a: handProc("f", 0x100, 10), b: handProc("f.isra.0", 0x200, 0) + handProc("f.isra.0.cold", 0x300, 10),
			status: ProcRenamed, also: []string{ProcSplit}, namesB: []string{"f.isra.0", "f.isra.0.cold"}},
		{name: "inlined", a: handProc("main", 0x100, 0, "g") + handProc("g", 0x200, 0), b: handProc("main", 0x100, 0, "g"),
			status: ProcInlined, callers: []string{"main"}},
		{name: "outlined", a: handProc("main", 0x100, 0, "g"), b: handProc("main", 0x100, 0) + handProc("g", 0x200, 0),
			status: ProcOutlined, callers: []string{"main"}},
		{name: "stub", a: handProc("main", 0x100, 0), b: handProc("main", 0x100, 0) + handProc("memcpy@plt", 0x50, 0),
			status: ProcStubAdded},
		{name: "removed", a: handProc("main", 0x100, 0) + handProc("gone", 0x200, 0), b: handProc("main", 0x100, 0),
			status: ProcRemoved},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Diff(mustParse(t, structtest.WrapProcs(c.a), "a"), mustParse(t, structtest.WrapProcs(c.b), "b"), DiffOptions{})
			var got *ProcReport
			for i := range r.Procedures {
				if r.Procedures[i].Status != ProcChanged {
					if got != nil {
						t.Fatalf("two functions decided: %+v", r.Procedures)
					}
					got = &r.Procedures[i]
				}
			}
			if got == nil {
				t.Fatalf("no decision: %+v", r.Procedures)
			}
			if got.Status != c.status || !slices.Equal(got.Also, c.also) || !slices.Equal(got.Callers, c.callers) ||
				!slices.Equal(got.NamesA, c.namesA) || !slices.Equal(got.NamesB, c.namesB) {
				t.Errorf("got %s also %v callers %v names %v %v, want %s %v %v %v %v",
					got.Status, got.Also, got.Callers, got.NamesA, got.NamesB, c.status, c.also, c.callers, c.namesA, c.namesB)
			}
			// A function's loop outlined into a part is still its loop.
			for _, ch := range got.Changes {
				if ch.Kind == LoopAdded || ch.Kind == LoopRemoved {
					t.Errorf("%s: %s %s", got.Name, ch.Kind, ch.Path)
				}
			}
		})
	}
}

// TestLoopTolerance: loops whose headers are within the tolerance are one
// loop; a leftover copy that shares lines with a matched loop is a split;
// a loop of other lines nearby is another loop.
func TestLoopTolerance(t *testing.T) {
	loop := func(line, lo int, stmts ...int) string {
		s := fmt.Sprintf(`<L l="%d" f="/src/x.c" v="{[0x%x-0x%x)}">`, line, lo, lo+1)
		for k, l := range stmts {
			s += fmt.Sprintf(`<S l="%d" v="{[0x%x-0x%x)}"/>`, l, lo+4*k, lo+4*k+4)
		}
		return s + `</L>`
	}
	p := func(body string) string {
		return `<P n="f" l="1" v="{[0x100-0x101)}"><S l="1" v="{[0x100-0x104)}"/>` + body + `</P>`
	}
	for _, c := range []struct {
		name string
		a, b string
		want Summary
	}{
		{"within tolerance", p(loop(10, 0x110, 11)), p(loop(12, 0x110, 11)), Summary{}},
		{"beyond tolerance", p(loop(10, 0x110, 11)), p(loop(20, 0x110, 11)), Summary{ProcsDiffer: 1, LoopsMoved: 1}},
		{"copy a line apart", p(loop(10, 0x110, 11)), p(loop(10, 0x110, 11) + loop(11, 0x130, 11)), Summary{ProcsDiffer: 1, LoopsSplit: 1}},
		{"another loop nearby", p(loop(10, 0x110, 11)), p(loop(10, 0x110, 11) + loop(13, 0x130, 14)), Summary{ProcsDiffer: 1, LoopsAdded: 1}},
		{"four copies into three", p(loop(10, 0x110, 11) + loop(10, 0x120, 11) + loop(10, 0x130, 11) + loop(10, 0x140, 11)),
			p(loop(10, 0x110, 11) + loop(10, 0x120, 11) + loop(10, 0x130, 11)), Summary{ProcsDiffer: 1, LoopsFused: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Diff(mustParse(t, structtest.WrapProcs(c.a), "a"), mustParse(t, structtest.WrapProcs(c.b), "b"), DiffOptions{})
			if r.Summary != c.want {
				t.Errorf("summary %s, want %s", r.Summary, c.want)
			}
		})
	}
}
