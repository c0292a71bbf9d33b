package diff

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"bloop/internal/structtest"
	"bloop/structure"
)

func TestEqualRangeless(t *testing.T) {
	d := mustParse(t, structtest.WrapProcs(`<P n="p" l="1" v="{}"/>`), "e.hpcstruct")
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
	da := mustParse(t, structtest.WrapProcs(`<P n="p" l="1" v="{[0x100-0x101)}">`+a.String()+`</P>`), "a")
	db := mustParse(t, structtest.WrapProcs(`<P n="p" l="1" v="{[0x100-0x101)}">`+b.String()+`</P>`), "b")
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
	base := structtest.WrapProcs(`<P n="main" l="9" v="{[0x100-0x101)}"><S l="10" v="{[0x100-0x110)}"/>` +
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

func walkNodes(n *structure.Node, fn func(n, parent *structure.Node)) {
	for _, c := range n.Children {
		fn(c, n)
		walkNodes(c, fn)
	}
}

// renumberShuffle gives every element a new id and shuffles all children.
func renumberShuffle(d *structure.Doc, seed uint64) *structure.Doc {
	c := d.Clone()
	r := rand.New(rand.NewPCG(seed, 99))
	next := 1_000_000
	walkNodes(c.Root, func(n, _ *structure.Node) {
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
func findUnique(d *structure.Doc, tag string) (n, parent *structure.Node) {
	walkNodes(d.Root, func(c, p *structure.Node) {
		if n != nil || c.Tag != tag {
			return
		}
		for _, s := range p.Children {
			if s != c && structure.Label(s) == structure.Label(c) {
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
	files, _ := structtest.RealFiles(t)
	removedLoops := 0
	for _, f := range files {
		t.Run(strings.TrimSuffix(f[strings.LastIndexByte(f, '/')+1:], ".hpcstruct"), func(t *testing.T) {
			d, err := structure.ParseFile(f)
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
			old := structure.Label(s)
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
				found = found || (x.Kind == DiffAttr && x.Attr == "v" && x.A == oldV && x.B == "{[0xfffff000-0xfffff001)}" && strings.HasSuffix(x.Path, "/"+structure.Label(s)))
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
			if ok || !hasDiff(ds, DiffMissing, "/"+structure.Label(l)) {
				t.Errorf("L removed (%s): ok %v, %v", structure.Label(l), ok, ds)
			}
			if r := Diff(d, c, DiffOptions{}); r.Summary.LoopsRemoved < 1 {
				t.Errorf("Diff after removing %s: %+v", structure.Label(l), r.Summary)
			}
		})
	}
	if removedLoops == 0 {
		t.Error("no real file had a loop to remove")
	}
}
