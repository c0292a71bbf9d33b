package diff

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/goldentest"
	"bloop/internal/structtest"
	"bloop/structure"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func mustParse(t testing.TB, src, name string) *structure.Doc {
	t.Helper()
	d, err := structure.Parse(strings.NewReader(structtest.WithIDs(src)), name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Building blocks for hand-made procedures (ids are omitted: they are ignored).
const (
	pMain = `<P n="main" l="9" v="{[0x100-0x101)}">`
	s10   = `<S l="10" v="{[0x100-0x110)}"/>`
)

var diffCases = []struct {
	name string
	a, b string
	opts DiffOptions
	want Summary
}{
	{
		name: "loop-added",
		a:    pMain + s10 + `<S l="11" v="{[0x110-0x120)}"/></P>`,
		b:    pMain + s10 + `<L l="11" f="/src/x.c" v="{[0x110-0x111)}"><S l="11" v="{[0x110-0x120)}"/></L></P>`,
		want: Summary{ProcsDiffer: 1, LoopsAdded: 1, StmtsIntoLoop: 1},
	},
	{
		name: "loop-removed",
		a:    pMain + s10 + `<L l="11" f="/src/x.c" v="{[0x110-0x111)}"><S l="11" v="{[0x110-0x120)}"/></L></P>`,
		b:    pMain + s10 + `<S l="11" v="{[0x110-0x120)}"/></P>`,
		want: Summary{ProcsDiffer: 1, LoopsRemoved: 1, StmtsOutOfLoop: 1},
	},
	{
		name: "loop-moved",
		a:    pMain + s10 + `<L l="20" f="/src/x.c" v="{[0x110-0x111)}"><S l="21" v="{[0x110-0x120)}"/></L></P>`,
		b:    pMain + s10 + `<L l="30" f="/other/dir/x.c" v="{[0x118-0x119)}"><S l="21" v="{[0x110-0x120)}"/></L></P>`,
		want: Summary{ProcsDiffer: 1, LoopsMoved: 1},
	},
	{
		name: "loop-split",
		a:    pMain + s10 + `<L l="30" f="/src/x.c" v="{[0x110-0x111)}"><S l="31" v="{[0x110-0x120)}"/><S l="32" v="{[0x120-0x130)}"/></L></P>`,
		b: pMain + s10 + `<L l="30" f="/src/x.c" v="{[0x110-0x111)}"><S l="31" v="{[0x110-0x120)}"/></L>` +
			`<L l="30" f="/src/x.c" v="{[0x120-0x121)}"><S l="32" v="{[0x120-0x130)}"/></L></P>`,
		want: Summary{ProcsDiffer: 1, LoopsSplit: 1},
	},
	{
		name: "loop-fused",
		a: pMain + s10 + `<L l="30" f="/src/x.c" v="{[0x110-0x111)}"><S l="31" v="{[0x110-0x120)}"/></L>` +
			`<L l="30" f="/src/x.c" v="{[0x120-0x121)}"><S l="32" v="{[0x120-0x130)}"/></L></P>`,
		b:    pMain + s10 + `<L l="30" f="/src/x.c" v="{[0x110-0x111)}"><S l="31" v="{[0x110-0x120)}"/><S l="32" v="{[0x120-0x130)}"/></L></P>`,
		want: Summary{ProcsDiffer: 1, LoopsFused: 1},
	},
	{
		// An extra enclosing loop: the inner loop still matches.
		name: "loop-enclosing-added",
		a:    pMain + s10 + `<L l="20" f="/src/x.c" v="{[0x110-0x111)}"><S l="21" v="{[0x110-0x120)}"/></L></P>`,
		b: pMain + s10 + `<L l="12" f="/src/x.c" v="{[0x108-0x109)}"><S l="12" v="{[0x108-0x110)}"/>` +
			`<L l="20" f="/src/x.c" v="{[0x110-0x111)}"><S l="21" v="{[0x110-0x120)}"/></L></L></P>`,
		want: Summary{ProcsDiffer: 1, LoopsAdded: 1},
	},
	{
		name: "inline-added",
		a:    pMain + s10 + `<S l="41" v="{[0x110-0x120)}"/></P>`,
		b: pMain + s10 + `<S l="41" v="{[0x118-0x120)}"/><A l="41" f="/src/x.c" n="" v="{}"><A l="5" f="/src/y.h" n="g" v="{}">` +
			`<S l="5" v="{[0x110-0x118)}"/></A></A></P>`,
		want: Summary{ProcsDiffer: 1, InlinesAdded: 1},
	},
	{
		name: "inline-removed",
		a: pMain + s10 + `<S l="41" v="{[0x118-0x120)}"/><A l="41" f="/src/x.c" n="" v="{}"><A l="5" f="/src/y.h" n="g" v="{}">` +
			`<S l="5" v="{[0x110-0x118)}"/></A></A></P>`,
		b:    pMain + s10 + `<S l="41" v="{[0x110-0x120)}"/></P>`,
		want: Summary{ProcsDiffer: 1, InlinesRemoved: 1},
	},
	{
		// The removed inlined call holds a loop and another inlined call: all counted.
		name: "inline-with-loop-removed",
		a: pMain + s10 + `<A l="41" f="/src/x.c" n="" v="{}"><A l="5" f="/src/y.h" n="g" v="{}">` +
			`<L l="6" f="/src/y.h" v="{[0x110-0x111)}"><S l="6" v="{[0x110-0x118)}"/>` +
			`<A l="7" f="/src/y.h" n="" v="{}"><A l="1" f="/src/z.h" n="h" v="{}"><S l="1" v="{[0x118-0x120)}"/></A></A></L></A></A></P>`,
		b:    pMain + s10 + `<S l="41" v="{[0x110-0x120)}"/></P>`,
		want: Summary{ProcsDiffer: 1, InlinesRemoved: 2, LoopsRemoved: 1},
	},
	{
		name: "inline-call-site-moved",
		a: pMain + s10 + `<A l="0" f="&lt;unknown&gt;" n="" v="{}"><A l="5" f="/src/y.h" n="g" v="{}">` +
			`<S l="5" v="{[0x110-0x118)}"/></A></A></P>`,
		b: pMain + s10 + `<A l="41" f="/src/x.c" n="" v="{}"><A l="5" f="/src/y.h" n="g" v="{}">` +
			`<S l="5" v="{[0x110-0x118)}"/></A></A></P>`,
		want: Summary{ProcsDiffer: 1, InlinesMoved: 1},
	},
	{
		name: "statement-into-loop",
		a: pMain + s10 + `<S l="51" v="{[0x110-0x118)}"/><L l="52" f="/src/x.c" v="{[0x118-0x119)}">` +
			`<S l="53" v="{[0x118-0x120)}"/></L></P>`,
		b: pMain + s10 + `<L l="52" f="/src/x.c" v="{[0x118-0x119)}"><S l="51" v="{[0x110-0x118)}"/>` +
			`<S l="53" v="{[0x118-0x120)}"/></L></P>`,
		want: Summary{ProcsDiffer: 1, StmtsIntoLoop: 1},
	},
	{
		name: "procedure-added",
		a:    pMain + s10 + `</P>`,
		b:    pMain + s10 + `</P><P n="g" l="1" v="{[0x200-0x201)}"><S l="1" v="{[0x200-0x210)}"/></P>`,
		want: Summary{ProcsDiffer: 1, ProcsAdded: 1},
	},
	{
		name: "procedure-removed",
		a:    pMain + s10 + `</P><P n="g(int)" ln="_Z1gi" l="1" v="{[0x200-0x201)}"><S l="1" v="{[0x200-0x210)}"/></P>`,
		b:    pMain + s10 + `</P>`,
		want: Summary{ProcsDiffer: 1, ProcsRemoved: 1},
	},
	{
		name: "addresses",
		a:    pMain + s10 + `<L l="11" f="/src/x.c" v="{[0x110-0x111)}"><S l="11" v="{[0x110-0x120)}"/></L></P>`,
		b:    pMain + s10 + `<L l="11" f="/src/x.c" v="{[0x112-0x113)}"><S l="11" v="{[0x110-0x118) [0x11a-0x120)}"/></L></P>`,
		opts: DiffOptions{Addresses: true},
		want: Summary{ProcsDiffer: 1, Addresses: 2},
	},
	{
		// Same document as "addresses" without the option: no difference.
		name: "addresses-ignored",
		a:    pMain + s10 + `<L l="11" f="/src/x.c" v="{[0x110-0x111)}"><S l="11" v="{[0x110-0x120)}"/></L></P>`,
		b:    pMain + s10 + `<L l="11" f="/src/x.c" v="{[0x112-0x113)}"><S l="11" v="{[0x110-0x118) [0x11a-0x120)}"/></L></P>`,
		want: Summary{},
	},
	{
		// Ids, P s, directories and the order of children are ignored.
		name: "equal",
		a:    `<P i="4" n="main" s="7" l="9" v="{[0x100-0x101)}"><S i="5" l="10" v="{[0x100-0x110)}"/><L i="6" l="11" f="/a/x.c" v="{[0x110-0x111)}"><S i="7" l="11" v="{[0x110-0x120)}"/></L></P>`,
		b:    `<P i="9" n="main" l="9" v="{[0x100-0x101)}"><L i="3" l="11" f="/b/c/x.c" v="{[0x110-0x111)}"><S i="2" l="11" v="{[0x110-0x120)}"/></L><S i="1" l="10" v="{[0x100-0x110)}"/></P>`,
		opts: DiffOptions{Addresses: true},
		want: Summary{},
	},
}

func TestDiffCases(t *testing.T) {
	for _, c := range diffCases {
		t.Run(c.name, func(t *testing.T) {
			a := mustParse(t, structtest.WrapProcs(c.a), "a.hpcstruct")
			b := mustParse(t, structtest.WrapProcs(c.b), "b.hpcstruct")
			r := Diff(a, b, c.opts)
			if r.Summary != c.want {
				t.Errorf("summary\n got %+v\nwant %+v", r.Summary, c.want)
			}
			if r.Equal() != (c.want == Summary{}) {
				t.Errorf("Equal() = %v", r.Equal())
			}
			if len(r.Warnings) != 0 {
				t.Errorf("warnings: %v", r.Warnings)
			}
			for _, d := range []*structure.Doc{a, b} {
				if rr := Diff(d, d, DiffOptions{Addresses: true}); !rr.Equal() {
					t.Errorf("Diff(%s, %s) not equal: %+v", d.Name, d.Name, rr.Procedures)
				}
			}
			var text, js bytes.Buffer
			if err := r.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := r.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("diff", c.name+".txt"), text.Bytes())
			checkGolden(t, filepath.Join("diff", c.name+".json"), js.Bytes())
		})
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldentest.Check(t, filepath.Join("testdata", name), got, *update)
}

func TestSummaryString(t *testing.T) {
	s := Summary{ProcsDiffer: 3, ProcsAdded: 1, LoopsAdded: 2, LoopsRemoved: 1, LoopsMoved: 1, InlinesAdded: 4, StmtsIntoLoop: 2, StmtsOutOfLoop: 1}
	want := "3 procedures differ: 1 added, 0 removed; loops +2 -1 moved 1 split 0 fused 0; inlined calls +4 -0 moved 0; statements moved 3 (2 into loops, 1 out of loops)"
	if s.String() != want {
		t.Errorf("got  %s\nwant %s", s, want)
	}
}

func TestDiffRealCompilers(t *testing.T) {
	fa := filepath.Join(structtest.HPCToolkitStructDir, "inlines+loops-x86_64-gcc12-dr.hpcstruct")
	fb := filepath.Join(structtest.HPCToolkitStructDir, "inlines+loops-x86_64-llvm15-dr.hpcstruct")
	if _, err := os.Stat(fa); err != nil {
		t.Fatal(err)
	}
	render := func() (string, string, *Report) {
		a, err := structure.ParseFile(fa)
		if err != nil {
			t.Fatal(err)
		}
		b, err := structure.ParseFile(fb)
		if err != nil {
			t.Fatal(err)
		}
		r := Diff(a, b, DiffOptions{})
		var text, js bytes.Buffer
		if err := r.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		return text.String(), js.String(), r
	}
	t1, j1, r := render()
	t2, j2, _ := render()
	if t1 != t2 || j1 != j2 {
		t.Error("two runs of Diff gave different output")
	}
	if r.Equal() {
		t.Fatalf("gcc12 and llvm15 structures reported equal:\n%s", t1)
	}
	// gcc keeps f_inlined out of line in f2 and has no call line for the
	// inlined f4_inline calls; llvm15 has both.
	if r.Summary.InlinesAdded != 1 || r.Summary.InlinesMoved != 2 || r.Summary.ProcsAdded != 0 || r.Summary.ProcsRemoved != 0 {
		t.Errorf("summary = %+v\n%s", r.Summary, t1)
	}
	if !strings.Contains(t1, "procedure f2 (inlines+loops.c): changed") {
		t.Errorf("text report lacks f2:\n%s", t1)
	}
}
