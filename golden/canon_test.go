package golden

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestBaseName(t *testing.T) {
	for in, want := range map[string]string{
		"/src/x.c":            "x.c",
		"x.c":                 "x.c",
		"../a/b.h":            "b.h",
		"[libfoo.so]":         "[libfoo.so]",
		"[lib/with/slash]":    "[lib/with/slash]",
		"<unknown>":           "<unknown>",
		"":                    "",
		"/usr/include/c++/12": "12",
	} {
		if got := baseName(in); got != want {
			t.Errorf("baseName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCanonicalize(t *testing.T) {
	src := wrapProcs(`<P i="9" n="g" s="3" l="1" v="{[0x200-0x201)}"><S i="10" l="1" v="{[0x200-0x210)}"/></P>` +
		`<P i="4" n="main" l="9" v="{[0x100-0x101)}"><L i="6" l="11" f="/a/b/x.c" v="{[0x110-0x111)}"><S i="7" l="11" v="{[0x110-0x120)}"/></L>` +
		`<A i="11" l="3" f="/q/y.h" n="&lt;inline&gt;" v="{}"><S i="12" l="3" v="{[0x108-0x110)}"/></A>` +
		`<S i="5" l="10" v="{[0x100-0x108)}"/></P>`)
	d := mustParse(t, src, "c.hpcstruct")
	c, err := Canonicalize(d)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var dump func(n *Node, depth int)
	dump = func(n *Node, depth int) {
		fmt.Fprintf(&b, "%s%s\n", strings.Repeat(" ", depth), startTag(n))
		for _, ch := range n.Children {
			dump(ch, depth+1)
		}
	}
	dump(c.Root, 0)
	want := `<HPCToolkitStructure n="" version="4.9">
 <LM has-calls="0" v="{}">
  <F n="x.c">
   <P l="9" n="main" v="{[0x100-0x101)}">
    <S l="10" v="{[0x100-0x108)}">
    <A f="y.h" l="3" n="&lt;inline&gt;" v="{}">
     <S l="3" v="{[0x108-0x110)}">
    <L f="x.c" l="11" v="{[0x110-0x111)}">
     <S l="11" v="{[0x110-0x120)}">
   <P l="1" n="g" v="{[0x200-0x201)}">
    <S l="1" v="{[0x200-0x210)}">
`
	if b.String() != want {
		t.Errorf("canonical form:\n%s\nwant:\n%s", b.String(), want)
	}
	if d.Root.Children[0].Children[0].Children[0].Value("i") != "9" {
		t.Error("Canonicalize modified its input")
	}
}

func TestCanonicalTieBreak(t *testing.T) {
	// Two siblings without addresses (an error) and two starting at the
	// same address must still sort the same way whatever their input order.
	kids := []string{
		`<A l="1" f="a.c" n="" v="{}"><A l="2" f="a.c" n="x" v="{}"/></A>`,
		`<A l="1" f="a.c" n="" v="{}"><A l="2" f="a.c" n="y" v="{}"/></A>`,
		`<S l="5" v="{[0x100-0x108)}"/>`,
		`<S l="6" v="{[0x100-0x104) [0x110-0x118)}"/>`,
	}
	var first string
	for perm := range 4 {
		order := []int{0, 1, 2, 3}
		rand.New(rand.NewPCG(uint64(perm), 7)).Shuffle(4, func(i, j int) { order[i], order[j] = order[j], order[i] })
		var body string
		for _, k := range order {
			body += kids[k]
		}
		d := mustParse(t, wrapProcs(`<P n="p" l="1" v="{[0x100-0x101)}">`+body+`</P>`), "t.hpcstruct")
		c, err := Canonicalize(d)
		var re *RangelessError
		if !errors.As(err, &re) || len(re.Paths) != 4 {
			t.Fatalf("want 4 rangeless elements, got %v", err)
		}
		var sb strings.Builder
		for _, ch := range c.Root.Children[0].Children[0].Children[0].Children {
			sb.WriteString(label(ch) + ";")
		}
		if first == "" {
			first = sb.String()
		} else if sb.String() != first {
			t.Errorf("order depends on input: %s vs %s", sb.String(), first)
		}
	}
	if !strings.HasPrefix(first, "S[l=5];S[l=6];A[f=a.c l=1];A[f=a.c l=1];") {
		t.Errorf("order = %s", first)
	}
}

func TestEqualRangeless(t *testing.T) {
	d := mustParse(t, wrapProcs(`<P n="p" l="1" v="{}"/>`), "e.hpcstruct")
	ok, ds := Equal(d, d)
	if ok {
		t.Fatal("a procedure without addresses compared equal")
	}
	want := []string{"LM/F[x.c]: element has no address range (in a)", "LM/F[x.c]/P[p]: element has no address range (in a)",
		"LM/F[x.c]: element has no address range (in b)", "LM/F[x.c]/P[p]: element has no address range (in b)"}
	if len(ds) != len(want) {
		t.Fatalf("diffs = %v", ds)
	}
	for i := range want {
		if ds[i].String() != want[i] {
			t.Errorf("diff %d = %q, want %q", i, ds[i], want[i])
		}
	}
	if r := Diff(d, d, DiffOptions{}); !r.Equal() || len(r.Warnings) != 4 {
		t.Errorf("Diff: equal %v, warnings %v", r.Equal(), r.Warnings)
	}
}

func TestEqualLimit(t *testing.T) {
	var a, b strings.Builder
	for i := range 80 {
		fmt.Fprintf(&a, `<S l="%d" v="{[0x%x-0x%x)}"/>`, i+1, 0x100+16*i, 0x108+16*i)
		fmt.Fprintf(&b, `<S l="%d" v="{[0x%x-0x%x)}"/>`, i+1, 0x100+16*i, 0x10c+16*i)
	}
	da := mustParse(t, wrapProcs(`<P n="p" l="1" v="{[0x100-0x101)}">`+a.String()+`</P>`), "a")
	db := mustParse(t, wrapProcs(`<P n="p" l="1" v="{[0x100-0x101)}">`+b.String()+`</P>`), "b")
	ok, ds := Equal(da, db)
	if ok || len(ds) != DefaultLimit+1 {
		t.Fatalf("ok %v, %d diffs", ok, len(ds))
	}
	if last := ds[len(ds)-1]; last.Kind != DiffMore || last.String() != "... 30 more differences (80 in total)" {
		t.Errorf("last = %q", last)
	}
	if got := ds[0].String(); got != `LM/F[x.c]/P[p]/S[l=1]: attribute v: "{[0x100-0x108)}" vs "{[0x100-0x10c)}"` {
		t.Errorf("first = %s", got)
	}
	c := Compare(da, db, 5)
	if c.Total != 80 || len(c.Diffs) != 5 || !strings.HasSuffix(c.String(), "... 75 more differences (80 in total)\n") {
		t.Errorf("Compare: total %d, %d diffs, %q", c.Total, len(c.Diffs), c.String())
	}
}

func TestEqualSmallMutations(t *testing.T) {
	base := wrapProcs(`<P n="main" l="9" v="{[0x100-0x101)}"><S l="10" v="{[0x100-0x110)}"/>` +
		`<L l="11" f="/src/x.c" v="{[0x110-0x111)}"><S l="11" v="{[0x110-0x120)}"/></L></P>`)
	tests := []struct {
		name, old, new string
		want           []string
	}{
		{"attr-added", `<P n="main"`, `<P ln="m" n="main"`, []string{`LM/F[x.c]/P[main]: attribute ln: (absent) vs "m"`}},
		{"attr-removed", ` f="/src/x.c"`, ``, []string{`LM/F[x.c]/P[main]/L[l=11]: attribute f: "x.c" vs (absent)`}},
		{"element-extra", `<S l="10"`, `<S l="8" v="{[0xf0-0xf8)}"/><S l="10"`, []string{`LM/F[x.c]/P[main]/S[l=8]: extra in b: <S l="8" v="{[0xf0-0xf8)}">`}},
		{"element-missing", `<S l="10" v="{[0x100-0x110)}"/>`, ``, []string{`LM/F[x.c]/P[main]/S[l=10]: missing in b: <S l="10" v="{[0x100-0x110)}">`}},
		{"directory-only", `f="/src/x.c"`, `f="/elsewhere/x.c"`, nil},
		{"LM-name", `n="/bin/x"`, `n="/usr/bin/y"`, nil},
		{"has-calls", `has-calls="0"`, `has-calls="1"`, []string{`LM: attribute has-calls: "0" vs "1"`}},
	}
	a := mustParse(t, base, "a")
	for _, tt := range tests {
		if !strings.Contains(base, tt.old) {
			t.Fatalf("%s: %q not in base", tt.name, tt.old)
		}
		b := mustParse(t, strings.Replace(base, tt.old, tt.new, 1), "b")
		ok, ds := Equal(a, b)
		var got []string
		for _, d := range ds {
			got = append(got, d.String())
		}
		if ok != (len(tt.want) == 0) || strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s: ok %v, diffs\n%s\nwant\n%s", tt.name, ok, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
	}
}

// mutate helpers for real documents.

func walkNodes(n *Node, fn func(n, parent *Node)) {
	for _, c := range n.Children {
		fn(c, n)
		walkNodes(c, fn)
	}
}

// renumberShuffle gives every element a new id and shuffles all children.
func renumberShuffle(d *Doc, seed uint64) *Doc {
	c := d.Clone()
	r := rand.New(rand.NewPCG(seed, 99))
	next := 1_000_000
	walkNodes(c.Root, func(n, _ *Node) {
		if _, ok := n.Get("i"); ok {
			n.Set("i", fmt.Sprint(next))
			next--
		}
		r.Shuffle(len(n.Children), func(i, j int) { n.Children[i], n.Children[j] = n.Children[j], n.Children[i] })
	})
	r.Shuffle(len(c.Root.Children), func(i, j int) { c.Root.Children[i], c.Root.Children[j] = c.Root.Children[j], c.Root.Children[i] })
	return c
}

// findUnique returns the first element with tag whose label is unique
// among its siblings, and its parent.
func findUnique(d *Doc, tag string) (n, parent *Node) {
	walkNodes(d.Root, func(c, p *Node) {
		if n != nil || c.Tag != tag {
			return
		}
		for _, s := range p.Children {
			if s != c && label(s) == label(c) {
				return
			}
		}
		n, parent = c, p
	})
	return n, parent
}

func hasDiff(ds []Difference, kind, suffix string) bool {
	for _, d := range ds {
		if d.Kind == kind && strings.HasSuffix(d.Path, suffix) {
			return true
		}
	}
	return false
}

func TestRealFiles(t *testing.T) {
	files, _ := realFiles(t)
	removedLoops := 0
	for _, f := range files {
		t.Run(strings.TrimSuffix(f[strings.LastIndexByte(f, '/')+1:], ".hpcstruct"), func(t *testing.T) {
			d, err := ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if ok, ds := Equal(d, d); !ok {
				t.Fatalf("Equal(x, x) is false: %v", ds)
			}
			if r := Diff(d, d, DiffOptions{Addresses: true}); !r.Equal() || len(r.Warnings) > 0 {
				t.Fatalf("Diff(x, x): %+v %v", r.Summary, r.Warnings)
			}
			if same, total := PathAgreement(d, d); same != total || total == 0 {
				t.Errorf("PathAgreement(x, x) = %d, %d", same, total)
			}
			sh := renumberShuffle(d, 1)
			if ok, ds := Equal(d, sh); !ok {
				t.Errorf("renumbered and shuffled copy differs: %v", ds)
			}
			if r := Diff(d, sh, DiffOptions{Addresses: true}); !r.Equal() {
				t.Errorf("Diff with shuffled copy: %+v", r.Summary)
			}
			if same, total := PathAgreement(d, sh); same != total {
				t.Errorf("PathAgreement with shuffled copy = %d, %d", same, total)
			}

			// One S line changed.
			c := d.Clone()
			s, _ := findUnique(c, "S")
			old := label(s)
			s.Set("l", "99999")
			ok, ds := Equal(d, c)
			if ok || !hasDiff(ds, DiffMissing, "/"+old) || !hasDiff(ds, DiffExtra, "/S[l=99999]") {
				t.Errorf("S l changed (%s): ok %v, %v", old, ok, ds)
			}
			if same, total := PathAgreement(d, c); same >= total {
				t.Errorf("S l changed: PathAgreement = %d, %d", same, total)
			}

			// One S v changed.
			c = d.Clone()
			s, _ = findUnique(c, "S")
			oldV := s.Value("v")
			s.Set("v", "{[0xfffff000-0xfffff001)}")
			ok, ds = Equal(d, c)
			found := false
			for _, x := range ds {
				found = found || (x.Kind == DiffAttr && x.Attr == "v" && x.A == oldV && x.B == "{[0xfffff000-0xfffff001)}" && strings.HasSuffix(x.Path, "/"+label(s)))
			}
			if ok || !found {
				t.Errorf("S v changed: ok %v, %v", ok, ds)
			}

			// One L removed.
			c = d.Clone()
			l, parent := findUnique(c, "L")
			if l == nil {
				return // no loops in this file (CUDA without CFG)
			}
			removedLoops++
			for i, x := range parent.Children {
				if x == l {
					parent.Children = append(parent.Children[:i], parent.Children[i+1:]...)
					break
				}
			}
			ok, ds = Equal(d, c)
			if ok || !hasDiff(ds, DiffMissing, "/"+label(l)) {
				t.Errorf("L removed (%s): ok %v, %v", label(l), ok, ds)
			}
			if r := Diff(d, c, DiffOptions{}); r.Summary.LoopsRemoved < 1 {
				t.Errorf("Diff after removing %s: %+v", label(l), r.Summary)
			}
		})
	}
	if removedLoops == 0 {
		t.Error("no real file had a loop to remove")
	}
}
