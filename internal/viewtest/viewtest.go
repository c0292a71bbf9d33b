// Package viewtest holds the pages' test inputs that view's own tests
// and the browser tests (the nested module bloop/browser) share: a
// hand-made profile and a hand-made pair of structure files whose names
// are markup, and the diff bloop diff --html makes. It is for tests only.
package viewtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/diff"
	"bloop/profile"
	"bloop/sample"
	"bloop/structure"
)

// Names that are markup when taken for HTML: C++ templates and operators,
// quotes, and an end tag of the page's own script element.
const (
	NameTemplate = `std::vector<int, std::allocator<int> >::push_back(int const&)`
	NameOperator = `operator<<(std::ostream&, "x" const&)`
	NameScript   = `</script><b id="x">not bold</b>&amp;`
	// NameMangled is NameTemplate's link name.
	NameMangled = "_ZNSt6vectorIiSaIiEE9push_backERKi"
)

// Synthetic builds a profile by hand, as profile.Build would from a
// recording: main calls work (a loop with an inlined helper) and the
// oddly named procedures, on two threads. Its files are /src/m.c,
// /src/w.c and /src/h.h (view/testdata/src has the first two).
func Synthetic() *profile.Profile {
	p := &profile.Profile{Root: &profile.Node{Label: "<program>"}, Threads: map[uint32]*profile.Node{},
		Comms: map[uint32]string{1: "prog"}, Reasons: map[string]uint64{}}
	p.Meta = sample.Meta{Command: []string{"./prog", "a<b"}, Event: "cpu-clock", Freq: 1000, StackSize: 32768}
	mainP := &profile.Elem{Kind: profile.ElemProc, Name: "main", Module: "prog", File: "/src/m.c", Line: 1}
	workP := &profile.Elem{Kind: profile.ElemProc, Name: "work", Module: "prog", File: "/src/w.c", Line: 3}
	tmpl := &profile.Elem{Kind: profile.ElemProc, Name: NameTemplate, Module: "libstdc++.so.6", File: "/usr/include/c++/0/bits/stl_vector.h", Line: 1280}
	op := &profile.Elem{Kind: profile.ElemProc, Name: NameOperator, Module: "prog", File: "/src/m.c", Line: 9}
	scr := &profile.Elem{Kind: profile.ElemProc, Name: NameScript, Module: "prog"}
	loop := &profile.Elem{Kind: profile.ElemLoop, File: "/src/w.c", Line: 5, Addr: 0x1100}
	inl := &profile.Elem{Kind: profile.ElemInline, Name: "helper", File: "/src/h.h", Line: 2, CallFile: "/src/w.c", CallLine: 7}
	st := func(file string, line int) *profile.Elem {
		return &profile.Elem{Kind: profile.ElemStmt, File: file, Line: line}
	}
	m4, m5, m6 := st("/src/m.c", 4), st("/src/m.c", 5), st("/src/m.c", 6)
	add := func(n uint64, tid uint32, path ...*profile.Elem) {
		tr := p.Threads[tid]
		if tr == nil {
			tr = &profile.Node{Label: "thread"}
			p.Threads[tid] = tr
		}
		for _, root := range []*profile.Node{p.Root, tr} {
			cur := root
			cur.Incl += n
			for _, e := range path {
				cur = childOf(cur, e)
				cur.Incl += n
			}
			cur.Excl += n
		}
		p.Samples += n
		p.Total += n
		p.Outcomes[0] += n
	}
	add(60, 1, mainP, m4, workP, loop, inl, st("/src/h.h", 3))
	add(20, 1, mainP, m4, workP, loop, st("/src/w.c", 6))
	add(5, 1, mainP, m4, workP, st("/src/w.c", 9))
	add(8, 2, mainP, m5, tmpl, st("/usr/include/c++/0/bits/stl_vector.h", 1287))
	add(4, 2, mainP, m6, op, st("/src/m.c", 10))
	add(3, 1, mainP, m6, op, st("/src/m.c", 10), scr)
	p.Lost = 2
	return p
}

// childOf returns n's child for scope e, made when missing (one child
// per scope, as profile's trees have).
func childOf(n *profile.Node, e *profile.Elem) *profile.Node {
	for _, c := range n.Children {
		if c.Elem == e {
			return c
		}
	}
	c := &profile.Node{Elem: e, Label: e.Label(), Parent: n}
	n.Children = append(n.Children, c)
	return c
}

// DetailedDiff diffs two structure files as bloop diff --html does.
func DetailedDiff(t testing.TB, a, b string) *diff.Report {
	t.Helper()
	da, err := structure.ParseFile(a)
	if err != nil {
		t.Fatal(err)
	}
	db, err := structure.ParseFile(b)
	if err != nil {
		t.Fatal(err)
	}
	return diff.Diff(da, db, diff.DiffOptions{Detail: true})
}

// Hand-made builds whose names are markup: A's loop in a C++ template
// method is gone in B, an inlined operator<< moved from line 20 to 22,
// B has one procedure more, and one is identical.
const diffSrc = `// x.cc: a source for the hand-made diff.
#include <ostream>
struct X {};

std::ostream& operator<<(std::ostream& o, X const&) {
  return o << "<&>";
}

void push_back(int const& v) {
  int n = v;
  for (int i = 0; i < n && i < 9; i++)
    n += i;
}

int same_one() { return 1; }

int main() {
  X x;
  std::cout << x;
  // the call site moves below
  std::cout << x;
}
`

func hostileDoc(b bool) string {
	esc := func(s string) string {
		return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
	}
	id := 2
	next := func() int { id++; return id }
	var w strings.Builder
	fmt.Fprintf(&w, "<?xml version=\"1.0\"?>\n<HPCToolkitStructure i=\"0\" version=\"4.9\" n=\"\">\n<LM i=\"1\" n=\"/bin/x\" has-calls=\"0\" v=\"{}\">\n<F i=\"2\" n=\"/src/x.cc\">\n")
	fmt.Fprintf(&w, `<P i="%d" n="%s" ln="%s" l="9" v="{[0x100-0x101)}"><S i="%d" l="10" v="{[0x100-0x108)}"/>`, next(), esc(NameTemplate), NameMangled, next())
	if !b {
		fmt.Fprintf(&w, `<L i="%d" l="11" f="/src/x.cc" v="{[0x108-0x109)}"><S i="%d" l="11" v="{[0x108-0x110)}"/><S i="%d" l="12" v="{[0x110-0x118)}"/></L>`, next(), next(), next())
	} else {
		fmt.Fprintf(&w, `<S i="%d" l="11" v="{[0x108-0x110)}"/><S i="%d" l="12" v="{[0x110-0x118)}"/>`, next(), next())
	}
	site := 20
	if b {
		site = 22
	}
	fmt.Fprintf(&w, "</P>\n"+`<P i="%d" n="main" l="17" v="{[0x200-0x201)}"><S i="%d" l="18" v="{[0x200-0x210)}"/>`+
		`<A i="%d" l="%d" f="/src/x.cc" n="" v="{}"><A i="%d" l="5" f="/src/x.cc" n="%s" v="{}"><S i="%d" l="6" v="{[0x210-0x218)}"/></A></A>`+
		`<S i="%d" l="19" v="{[0x218-0x220)}"/></P>`+"\n", next(), next(), next(), site, next(), esc(NameOperator), next(), next())
	fmt.Fprintf(&w, `<P i="%d" n="same_one" l="15" v="{[0x300-0x301)}"><S i="%d" l="15" v="{[0x300-0x308)}"/></P>`+"\n", next(), next())
	if b {
		fmt.Fprintf(&w, `<P i="%d" n="%s" l="16" v="{[0x400-0x401)}"><S i="%d" l="16" v="{[0x400-0x408)}"/></P>`+"\n", next(), esc(NameScript), next())
	}
	w.WriteString("</F>\n</LM>\n</HPCToolkitStructure>\n")
	return w.String()
}

// HostileFiles writes the hand-made pair and the source they name; it
// returns the two files and the directory that holds what they call
// /src (x.cc).
func HostileFiles(t testing.TB) (a, b, src string) {
	t.Helper()
	dir := t.TempDir()
	a, b, src = filepath.Join(dir, "a<&>.hpcstruct"), filepath.Join(dir, "b.hpcstruct"), filepath.Join(dir, "src")
	for _, f := range []struct {
		path, text string
	}{{a, hostileDoc(false)}, {b, hostileDoc(true)}, {filepath.Join(src, "x.cc"), diffSrc}} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return a, b, src
}

// KernelEntry is KernelProc's entry: above 2^63, which a JSON number (a
// JavaScript double) cannot hold exactly.
const KernelEntry = 0xffffffff81000000

// KernelProc is a kernel procedure, start_kernel of /src/k.c at
// KernelEntry (line 2): a statement of 16 bytes at its entry (line 3), a
// loop at KernelEntry+0x10 (line 4) of one statement of 8 (line 5).
func KernelProc() *structure.Scope {
	const entry = KernelEntry
	loop := &structure.Scope{Kind: structure.Loop, File: "/src/k.c", Line: 4, Entry: entry + 0x10,
		Children: []*structure.Scope{{Kind: structure.Stmt, Line: 5, Ranges: []structure.Range{{Lo: entry + 0x10, Hi: entry + 0x18}}}}}
	return &structure.Scope{Kind: structure.Proc, Name: "start_kernel", Line: 2, Entry: entry,
		Children: []*structure.Scope{{Kind: structure.Stmt, Line: 3, Ranges: []structure.Range{{Lo: entry, Hi: entry + 0x10}}}, loop}}
}
