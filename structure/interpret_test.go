package structure

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"bloop/internal/structtest"
)

// TestViewRoundTrip: the typed view of a file bloop wrote is the tree it
// was written from, as far as the XML holds it: writing it again gives
// the same bytes.
func TestViewRoundTrip(t *testing.T) {
	var a, b bytes.Buffer
	if err := WriteXML(&a, []*Module{sampleModule()}, true); err != nil {
		t.Fatal(err)
	}
	d, err := Parse(bytes.NewReader(a.Bytes()), "a.hpcstruct")
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteXML(&b, d.Modules(), true); err != nil {
		t.Fatal(err)
	}
	if a.String() != b.String() {
		t.Errorf("written again:\n%s\nwant:\n%s", b.String(), a.String())
	}
}

// TestInterpret: what each scope is in its context, for a tree built by
// the pipeline and for the same tree read back from its file.
func TestInterpret(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteXML(&buf, []*Module{sampleModule()}, false); err != nil {
		t.Fatal(err)
	}
	d, err := Parse(&buf, "a.hpcstruct")
	if err != nil {
		t.Fatal(err)
	}
	const want = "P f & \"g\" /src/a.c:4;S /src/a.c:4;G /src/b.h:9;S /src/b.h:9;L /src/a.c:5;S /src/a.c:5;S /src/a.c:6;" +
		"C /src/a.c:7;I g<int> /src/a.h:2 at /src/a.c:7;S /src/a.h:2;"
	for _, m := range [][]*Module{{sampleModule()}, d.Modules()} {
		var b strings.Builder
		var walk func(it Item)
		walk = func(it Item) {
			b.WriteString(map[Role]string{RoleProc: "P ", RoleInlined: "I ", RoleCallSite: "C ", RoleGuard: "G ", RoleLoop: "L ", RoleStmt: "S "}[it.Role])
			if it.Role == RoleProc || it.Role == RoleInlined {
				b.WriteString(it.Name + " ")
			}
			b.WriteString(it.File + ":" + itoa(it.Line))
			if it.Site != nil {
				b.WriteString(" at " + it.Site.File + ":" + itoa(it.Site.Line))
			}
			b.WriteString(";")
			for c := range it.Children() {
				walk(c)
			}
		}
		f := m[0].Files[0]
		walk(Interpret(f.Procs[0], FileCtx(f.Name)))
		if b.String() != want {
			t.Errorf("got  %s\nwant %s", b.String(), want)
		}
	}
}

// TestViewAliens: a named A in a call site is its callee, elsewhere a
// lone alien context; an A or L without f is in its context's file.
func TestViewAliens(t *testing.T) {
	d := mustParse(t, structtest.WrapProcs(`<P n="p" l="1" v="{[0x10-0x11)}"><A l="2" n="lone" v="{}"><L l="3" v="{[0x10-0x11)}"><S l="3" v="{[0x10-0x12)}"/></L></A>`+
		`<A l="4" f="/src/y.c" n="" v="{}"><A l="5" n="callee" v="{}"><S l="5" v="{[0x20-0x22)}"/></A></A></P>`), "x")
	p := d.Modules()[0].Files[0].Procs[0]
	lone, site := p.Children[0], p.Children[1]
	if lone.Role() != RoleInlined || lone.Inline != InlineAlien || lone.File != "/src/x.c" || lone.Children[0].File != "/src/x.c" {
		t.Errorf("lone alien: %+v", lone)
	}
	callee := Interpret(site.Children[0], Interpret(site, FileCtx("/src/x.c")).In)
	if callee.Role != RoleInlined || callee.Site != site || callee.File != "/src/y.c" {
		t.Errorf("callee: %+v", callee)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
