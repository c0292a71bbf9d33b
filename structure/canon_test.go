package structure

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"bloop/internal/structtest"
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
		if got := BaseName(in); got != want {
			t.Errorf("BaseName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCanonicalize(t *testing.T) {
	src := structtest.WrapProcs(`<P i="9" n="g" s="3" l="1" v="{[0x200-0x201)}"><S i="10" l="1" v="{[0x200-0x210)}"/></P>` +
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
		fmt.Fprintf(&b, "%s%s\n", strings.Repeat(" ", depth), StartTag(n))
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
		d := mustParse(t, structtest.WrapProcs(`<P n="p" l="1" v="{[0x100-0x101)}">`+body+`</P>`), "t.hpcstruct")
		c, err := Canonicalize(d)
		var re *RangelessError
		if !errors.As(err, &re) || len(re.Paths) != 4 {
			t.Fatalf("want 4 rangeless elements, got %v", err)
		}
		var sb strings.Builder
		for _, ch := range c.Root.Children[0].Children[0].Children[0].Children {
			sb.WriteString(Label(ch) + ";")
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
