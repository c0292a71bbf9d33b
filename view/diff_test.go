package view

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"bloop/internal/viewtest"
)

// The diff page is tested on two real builds, inline.c by gcc 12 at -O2
// and -O3 (the corpus's committed structure files: -O3 unrolls
// poly_eval's loop and inlines inline_poly into main), and on a
// hand-made pair with markup in its names.
var (
	diffO2 = "../testdata/golden/inline-gcc12-O2.hpcstruct"
	diffO3 = "../testdata/golden/inline-gcc12-O3.hpcstruct"
)

var detailedDiff = viewtest.DetailedDiff

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

// TestDiffHostileData: the hand-made pair gives the changes the browser
// test looks for.
func TestDiffHostileData(t *testing.T) {
	a, b, _ := viewtest.HostileFiles(t)
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
	want := nameScript + " added, " + viewtest.NameMangled + " loop-removed, " + viewtest.NameMangled + " statement-out-of-loop, " + viewtest.NameMangled + " statement-out-of-loop, main inline-moved"
	if strings.Join(kinds, ", ") != want {
		t.Errorf("changes %q\nwant %q", strings.Join(kinds, ", "), want)
	}
}
