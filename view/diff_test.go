package view

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"bloop/diff"
	"bloop/structure"
)

// The diff page is tested on two real builds, inline.c by gcc 12 at -O2
// and -O3 (the corpus's committed structure files: -O3 unrolls
// poly_eval's loop and inlines inline_poly into main), and on a
// hand-made pair with markup in its names.
var (
	diffO2 = "../testdata/golden/inline-gcc12-O2.hpcstruct"
	diffO3 = "../testdata/golden/inline-gcc12-O3.hpcstruct"
)

// detailedDiff diffs two structure files as bloop diff --html does.
func detailedDiff(t *testing.T, a, b string) *diff.Report {
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

// TestDiffDataGolden: the diff page's data of inline.c at -O2 and -O3.
func TestDiffDataGolden(t *testing.T) {
	d, err := DiffPage(detailedDiff(t, diffO2, diffO3), DiffOptions{Sources: repoSources})
	if err != nil {
		t.Fatal(err)
	}
	b, err := jsonIndent(d)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "diff-inline.json", b)
	// The page is made the same way twice.
	var w1, w2 bytes.Buffer
	if err := WriteDiff(&w1, d); err != nil {
		t.Fatal(err)
	}
	d2, _ := DiffPage(detailedDiff(t, diffO2, diffO3), DiffOptions{Sources: repoSources})
	if err := WriteDiff(&w2, d2); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w1.Bytes(), w2.Bytes()) {
		t.Error("two pages of one diff differ")
	}
}

// TestDiffDataChanges reads the data as the page does: the loop -O3
// unrolled is a loop node of A's tree, marked removed, and its other
// side is B's inlined poly_eval that held it; identical procedures are
// named, and the sources of both sides are embedded.
func TestDiffDataChanges(t *testing.T) {
	d, err := DiffPage(detailedDiff(t, diffO2, diffO3), DiffOptions{Sources: repoSources})
	if err != nil {
		t.Fatal(err)
	}
	s := d.Strings
	label := func(tr *STree, i int) string {
		return fmt.Sprintf("%d %s %s:%d", tr.Kind[i], s[tr.Name[i]], filepath.Base(s[tr.File[i]]), tr.Line[i])
	}
	var got []string
	for _, p := range d.Pairs[0].Procs {
		for _, c := range p.Changes {
			var as, bs []string
			for _, i := range c.A {
				as = append(as, label(&d.TreeA, i))
			}
			for _, i := range c.B {
				bs = append(bs, label(&d.TreeB, i))
			}
			got = append(got, fmt.Sprintf("%s %s: %s | %s", s[p.Name], c.Kind, strings.Join(as, ","), strings.Join(bs, ",")))
		}
	}
	want := []string{
		"inline_poly loop-removed: 2  inline_helpers.h:12 | 1 poly_eval inline_helpers.h:13",
		"inline_poly inline-added: 0 inline_poly inline.c:53 | 1 poly_eval inline_helpers.h:13",
		"main inline-added: 0 main inline.c:59 | 1 inline_poly inline.c:53",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(d.Pairs[0].Same) / 2; n != 11 {
		t.Errorf("%d identical procedures, want 11", n)
	}
	var found []string
	for _, f := range d.Files {
		if f.Text != "" {
			found = append(found, s[f.Path])
		}
	}
	if strings.Join(found, " ") != "/src/inline.c /src/inline_helpers.h" {
		t.Errorf("sources embedded: %q", found)
	}
}

// TestDiffLimits: --proc keeps the procedures it matches (and names only
// the identical ones it matches); a page over the bound is refused with
// a message that says what to do.
func TestDiffLimits(t *testing.T) {
	r := detailedDiff(t, diffO2, diffO3)
	d, err := DiffPage(r, DiffOptions{Proc: regexp.MustCompile("^main$|^_start$")})
	if err != nil {
		t.Fatal(err)
	}
	p := d.Pairs[0]
	if len(p.Procs) != 1 || d.Strings[p.Procs[0].Name] != "main" || len(p.Same) != 2 || d.Strings[p.Same[0]] != "_start" || d.Proc == "" {
		t.Errorf("--proc: procs %+v, same %v", p.Procs, p.Same)
	}
	if d.Summary != r.Summary {
		t.Errorf("the summary is of the whole diff: %+v", d.Summary)
	}
	_, err = DiffPage(r, DiffOptions{MaxScopes: 20})
	var big *ErrTooLarge
	if !errors.As(err, &big) || !strings.Contains(err.Error(), "--proc") || !strings.Contains(err.Error(), "inline-gcc12-O2") {
		t.Errorf("a diff over the bound: %v", err)
	}
}

// Hand-made builds whose names are markup: A's loop in a C++ template
// method is gone in B, an inlined operator<< moved from line 20 to 22,
// B has one procedure more, and one is identical.
const (
	nameMangled = "_ZNSt6vectorIiSaIiEE9push_backERKi"
	diffSrc     = `// x.cc: a source for the hand-made diff.
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
)

func hostileDoc(b bool) string {
	esc := func(s string) string {
		return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
	}
	id := 2
	next := func() int { id++; return id }
	var w strings.Builder
	fmt.Fprintf(&w, "<?xml version=\"1.0\"?>\n<HPCToolkitStructure i=\"0\" version=\"4.9\" n=\"\">\n<LM i=\"1\" n=\"/bin/x\" has-calls=\"0\" v=\"{}\">\n<F i=\"2\" n=\"/src/x.cc\">\n")
	fmt.Fprintf(&w, `<P i="%d" n="%s" ln="%s" l="9" v="{[0x100-0x101)}"><S i="%d" l="10" v="{[0x100-0x108)}"/>`, next(), esc(nameTemplate), nameMangled, next())
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
		`<S i="%d" l="19" v="{[0x218-0x220)}"/></P>`+"\n", next(), next(), next(), site, next(), esc(nameOperator), next(), next())
	fmt.Fprintf(&w, `<P i="%d" n="same_one" l="15" v="{[0x300-0x301)}"><S i="%d" l="15" v="{[0x300-0x308)}"/></P>`+"\n", next(), next())
	if b {
		fmt.Fprintf(&w, `<P i="%d" n="%s" l="16" v="{[0x400-0x401)}"><S i="%d" l="16" v="{[0x400-0x408)}"/></P>`+"\n", next(), esc(nameScript), next())
	}
	w.WriteString("</F>\n</LM>\n</HPCToolkitStructure>\n")
	return w.String()
}

// hostileFiles writes the hand-made pair and the source they name; it
// returns the two files and the source options that find x.cc.
func hostileFiles(t *testing.T) (a, b string, o Options) {
	t.Helper()
	dir := t.TempDir()
	a, b = filepath.Join(dir, "a<&>.hpcstruct"), filepath.Join(dir, "b.hpcstruct")
	for _, f := range []struct {
		path, text string
	}{{a, hostileDoc(false)}, {b, hostileDoc(true)}, {filepath.Join(dir, "src", "x.cc"), diffSrc}} {
		os.MkdirAll(filepath.Dir(f.path), 0o755)
		if err := os.WriteFile(f.path, []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return a, b, Options{Replace: []Replacement{{Old: "/src", New: filepath.Join(dir, "src")}}}
}

// TestDiffHostileData: the hand-made pair gives the changes the browser
// test looks for.
func TestDiffHostileData(t *testing.T) {
	a, b, _ := hostileFiles(t)
	r := detailedDiff(t, a, b)
	var kinds []string
	for _, p := range r.Procedures {
		for _, c := range p.Changes {
			kinds = append(kinds, p.Name+" "+c.Kind)
		}
		if len(p.Changes) == 0 {
			kinds = append(kinds, p.Name+" "+p.Status)
		}
	}
	want := nameScript + " added, " + nameMangled + " loop-removed, " + nameMangled + " statement-out-of-loop, " + nameMangled + " statement-out-of-loop, main inline-moved"
	if strings.Join(kinds, ", ") != want {
		t.Errorf("changes %q\nwant %q", strings.Join(kinds, ", "), want)
	}
}
