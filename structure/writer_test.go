package structure

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func sampleModule() *Module {
	s := func(file string, line int, lo, hi uint64) *Scope {
		return &Scope{Kind: Stmt, File: file, Line: line, Ranges: []Range{{Lo: lo, Hi: hi}}}
	}
	loop := &Scope{Kind: Loop, File: "/src/a.c", Line: 5, Entry: 0x1010, Children: []*Scope{s("/src/a.c", 5, 0x1010, 0x1018), s("/src/a.c", 6, 0x1018, 0x1020)}}
	callee := &Scope{Kind: Alien, Name: "g<int>", File: "/src/a.h", Line: 2, Inline: InlineCallee, Children: []*Scope{s("/src/a.h", 2, 0x1020, 0x1024)}}
	site := &Scope{Kind: Alien, File: "/src/a.c", Line: 7, Children: []*Scope{callee}}
	guard := &Scope{Kind: Alien, Name: "<inline>", File: "/src/b.h", Line: 9, Inline: InlineGuard, Children: []*Scope{s("/src/b.h", 9, 0x1024, 0x1026)}}
	p := &Scope{Kind: Proc, Name: "f & \"g\"", LinkName: "_Z1fv", Line: 4, Entry: 0x1000,
		Children: []*Scope{s("/src/a.c", 4, 0x1000, 0x1010), guard, loop, site}}
	return NewModule("/bin/x", "x", []ProcResult{{p, "/src/a.c"}})
}

func TestWriteXML(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteXML(&buf, []*Module{sampleModule()}, false); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	body := out[strings.Index(out, "<HPCToolkitStructure i"):]
	want := `<HPCToolkitStructure i="0" version="4.9" n="">
<LM i="2" n="/bin/x" has-calls="0" v="{}">
<F i="3" n="/src/a.c">
<P i="4" n="f &amp; &quot;g&quot;" ln="_Z1fv" l="4" v="{[0x1000-0x1001)}">
<S i="5" l="4" v="{[0x1000-0x1010)}"/>
<A i="6" l="9" f="/src/b.h" n="&lt;inline&gt;" v="{}">
<S i="7" l="9" v="{[0x1024-0x1026)}"/>
</A>
<L i="8" l="5" f="/src/a.c" v="{[0x1010-0x1011)}">
<S i="9" l="5" v="{[0x1010-0x1018)}"/>
<S i="10" l="6" v="{[0x1018-0x1020)}"/>
</L>
<A i="11" l="7" f="/src/a.c" n="" v="{}">
<A i="12" l="2" f="/src/a.h" n="g&lt;int&gt;" v="{}">
<S i="13" l="2" v="{[0x1020-0x1024)}"/>
</A>
</A>
</P>
</F>
</LM>
</HPCToolkitStructure>
`
	if body != want {
		t.Errorf("got\n%s\nwant\n%s", body, want)
	}
	if !strings.HasPrefix(out, "<?xml version=\"1.0\"?>\n<!DOCTYPE HPCToolkitStructure [") {
		t.Errorf("missing XML declaration or DTD")
	}
	buf.Reset()
	WriteXML(&buf, []*Module{sampleModule()}, true)
	if !strings.Contains(buf.String(), "\n      <S i=\"5\" l=\"4\"") {
		t.Errorf("--pretty-print does not indent two spaces per level")
	}
}

func TestFormatRanges(t *testing.T) {
	for _, c := range []struct {
		in   []Range
		want string
	}{
		{nil, "{}"},
		{[]Range{{Lo: 0, Hi: 0x10}}, "{[0-0x10)}"},
		{[]Range{{Lo: 0x10, Hi: 0x20}, {Lo: 0x30, Hi: 0x31}}, "{[0x10-0x20) [0x30-0x31)}"},
	} {
		if got := FormatRanges(c.in); got != c.want {
			t.Errorf("FormatRanges(%v) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, []*Module{sampleModule()}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Version int
		Modules []struct {
			Files []struct {
				Name  string
				Procs []*jsonScope
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.Modules[0].Files[0].Procs[0]
	if doc.Version != 1 || p.Kind != "P" || p.Entry != "0x1000" || p.LinkName != "_Z1fv" {
		t.Fatalf("procedure %+v", p)
	}
	// Each scope's range is of its own file's lines: a.c's 4-6 for the
	// procedure, not a.h's 2 or b.h's 9.
	lines := func(s *jsonScope) any {
		if s.Lines == nil {
			return nil
		}
		return *s.Lines
	}
	for _, c := range []struct {
		s    *jsonScope
		want any
	}{
		{p, [2]int{4, 6}},
		{p.Children[1], [2]int{9, 9}},             // guard in b.h
		{p.Children[2], [2]int{5, 6}},             // loop
		{p.Children[3], nil},                      // call site in a.c: no a.c statement under it
		{p.Children[3].Children[0], [2]int{2, 2}}, // callee in a.h
	} {
		if got := lines(c.s); got != c.want {
			t.Errorf("%s %s line range %v, want %v", c.s.Kind, c.s.Inline, got, c.want)
		}
	}
	kinds := ""
	for _, c := range p.Children {
		kinds += c.Kind + ":" + c.Inline + " "
	}
	if kinds != "S: A:guard L: A:call " {
		t.Errorf("children %q", kinds)
	}
	if site := p.Children[3]; site.Children[0].Inline != "callee" || site.Children[0].Name != "g<int>" {
		t.Errorf("inline pair %+v", site.Children[0])
	}
}

// TestWriteXMLCallSites: a module of GPU code analysed with a CFG says
// has-calls="1", and a call instruction is a C element with its callee
// and device, as hpcstruct --gpucfg writes it (recursion-sm_75-nvcc112-dr).
func TestWriteXMLCallSites(t *testing.T) {
	call := &Scope{Kind: Stmt, File: "/src/recursion.cu", Line: 51, Ranges: []Range{{Lo: 0x2db0, Hi: 0x2dc0}},
		Call: &CallSite{Target: 0x3260, Device: "NVIDIA sm_75"}}
	p := &Scope{Kind: Proc, Name: "kernmain()", LinkName: "_Z8kernmainv", Line: 50, Entry: 0x2d80, Children: []*Scope{
		{Kind: Stmt, File: "/src/recursion.cu", Line: 51, Ranges: []Range{{Lo: 0x2d90, Hi: 0x2db0}}}, call}}
	m := NewModule("/bin/r", "r", []ProcResult{{p, "/src/recursion.cu"}})
	m.HasCalls = true
	var buf bytes.Buffer
	if err := WriteXML(&buf, []*Module{m}, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<LM i="2" n="/bin/r" has-calls="1" v="{}">`, `<S i="5" l="51" v="{[0x2d90-0x2db0)}"/>
<C i="6" l="51" v="{[0x2db0-0x2dc0)}" t="0x3260" d="NVIDIA sm_75"/>
</P>`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no %s in\n%s", want, buf.String())
		}
	}
}
