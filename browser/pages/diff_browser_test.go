package pages

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"bloop/browser/browsertest"
	"bloop/diff"
	"bloop/internal/viewtest"
	"bloop/loader"
	"bloop/pipeline"
	"bloop/structure"
	"bloop/view"
)

// writeDiffPage writes the diff page of a and b and returns its path.
func writeDiffPage(t *testing.T, a, b string, o view.Options) string {
	t.Helper()
	d, err := view.DiffPage(viewtest.DetailedDiff(t, a, b), view.DiffOptions{Sources: o})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "diff.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := view.WriteDiff(f, d); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// The diff page is tested on two real builds, inline.c by gcc 12 at -O2
// and -O3 (the corpus's committed structure files: -O3 unrolls
// poly_eval's loop and inlines inline_poly into main), and on a
// hand-made pair with markup in its names.
var (
	diffO2 = goldenDir + "/inline-gcc12-O2.hpcstruct"
	diffO3 = goldenDir + "/inline-gcc12-O3.hpcstruct"
)

// Expressions that read the page.
const (
	procLabels   = `[...document.querySelectorAll('ol.procs li .label')].map(e => e.textContent)`
	changeLabels = `[...document.querySelectorAll('ol.changes li')].map(e => e.textContent)`
	// side(k): the rows of tree A (0) or B (1), as label|classes.
	sideRows = `(k) => [...document.querySelectorAll('.sides .side')[k].querySelectorAll('table.stree tbody tr')].map(tr => tr.querySelector('.label').textContent + '|' + tr.className)`
)

func rowsOf(tb *tab, side int) []string {
	return eval[[]string](tb, `(`+sideRows+`)(`+string(rune('0'+side))+`)`)
}

// rowWith returns the row (label|classes) whose label is label.
func rowWith(rows []string, label string) string {
	for _, r := range rows {
		if strings.HasPrefix(r, label+"|") {
			return r
		}
	}
	return ""
}

// clearSearch empties the search field.
func clearSearch(tb *tab) {
	eval[bool](tb, `(() => { const i = document.querySelector('input.search'); i.value = ''; i.dispatchEvent(new Event('input')); return true; })()`)
}

// TestDiffPage opens the diff page of inline.c at -O2 and -O3: the
// procedures that differ are listed, inline_poly's trees are side by
// side, the loop -O3 unrolled is coloured on A's side and its header
// (inline_helpers.h:12) is marked in the source pane with A's loop in
// A's gutter column; the search by name finds a procedure that differs
// and says that one that does not is identical.
func TestDiffPage(t *testing.T) {
	browsertest.Need(t)
	tb := openPage(t, writeDiffPage(t, diffO2, diffO3, repoSources))
	if got := eval[[]string](tb, procLabels); !slices.Equal(got, []string{"inline_poly", "main"}) {
		t.Errorf("procedures listed %q", got)
	}
	// The first procedure is open with its first change chosen.
	if got := eval[[]string](tb, changeLabels); len(got) != 2 || got[0] != "loop removed: loop at inline_helpers.h:12: its lines now in A(inline.c:54:)/A(inline_helpers.h:13:poly_eval), L(inline.c:53)/A(inline.c:54:)/A(inline_helpers.h:13:poly_eval)" {
		t.Errorf("changes of inline_poly: %q", got)
	}
	a, b := rowsOf(tb, 0), rowsOf(tb, 1)
	if len(a) < 5 || len(b) < 5 || !strings.HasPrefix(a[0], "inline_poly|") || !strings.HasPrefix(b[0], "inline_poly|") {
		t.Fatalf("the trees: A %q, B %q", a, b)
	}
	if r := rowWith(a, "loop at inline_helpers.h:12"); !strings.Contains(r, "ch-rm") || !strings.Contains(r, "sel") {
		t.Errorf("A's removed loop: %q", r)
	}
	if r := rowWith(b, "[inlined] poly_eval (called at inline.c:54)"); !strings.Contains(r, "ch-add") {
		t.Errorf("B's added inlined call: %q", r)
	}
	src := eval[string](tb, `document.querySelector('.diff-source .src-title .path').textContent`)
	line12 := eval[string](tb, `(document.querySelector('table.src tr[data-line="12"]') || {className: ''}).className`)
	gutterA := eval[[]string](tb, `[...document.querySelectorAll('table.src tr')].filter(tr => tr.querySelector('td.ga .lc.rm')).map(tr => tr.dataset.line)`)
	if src != "/src/inline_helpers.h" || !strings.Contains(line12, "ch-rm") || !strings.Contains(line12, "cur") || strings.Join(gutterA, ",") != "12,13" {
		t.Errorf("source pane: %s, line 12 %q, A's removed loop in the gutter on lines %q (want 12,13)", src, line12, gutterA)
	}
	if text := eval[string](tb, `document.querySelector('table.src tr[data-line="12"] .badge').textContent`); text != "A: loop removed" {
		t.Errorf("line 12's badge: %q", text)
	}
	tb.Screenshot("diff-inline.png")

	// main: its added inlined call is B's; the A side names where.
	tb.Do(chromedp.Click(chromedp.Search(`//ol[contains(@class,"procs")]//li[.//span[text()="main"]]`)))
	if r := rowWith(rowsOf(tb, 1), "[inlined] inline_poly (called at inline.c:63)"); !strings.Contains(r, "ch-add") || !strings.Contains(r, "sel") {
		t.Errorf("main's inlined inline_poly in B: %q", r)
	}
	if r := rowWith(rowsOf(tb, 0), "main"); !strings.Contains(r, "ch-where") || !strings.Contains(r, "sel") {
		t.Errorf("main in A, where the call was inlined: %q", r)
	}
	if cur := eval[string](tb, `document.querySelector('table.src tr.cur').dataset.line`); cur != "63" {
		t.Errorf("the source opens at line %s, want the call site 63", cur)
	}

	tb.Do(chromedp.SendKeys(chromedp.CSS("input.search"), "^main$"))
	if got := eval[[]string](tb, procLabels); !slices.Equal(got, []string{"main"}) {
		t.Errorf("search ^main$: %q", got)
	}
	clearSearch(tb)
	tb.Do(chromedp.SendKeys(chromedp.CSS("input.search"), "^_start$"))
	info := eval[string](tb, `document.querySelector('.diff-bar .info').textContent`)
	same := eval[[]string](tb, `[...document.querySelectorAll('ol.same li')].map(e => e.textContent)`)
	if got := eval[[]string](tb, procLabels); len(got) != 0 || !slices.Equal(same, []string{"identical: _start"}) || !strings.Contains(info, "1 identical procedures match") {
		t.Errorf("search ^_start$: listed %q, %q, %q", got, same, info)
	}
	clearSearch(tb)
	tb.Do(chromedp.SendKeys(chromedp.CSS("input.search"), "nothing_is_called_this"))
	if info := eval[string](tb, `document.querySelector('.diff-bar .info').textContent`); info != "no procedure matches" {
		t.Errorf("a search that matches nothing: %q", info)
	}
}

// TestDiffPageNames: on the hand-made pair whose names are markup (listed
// changed first, then removed, then added), the
// names are the DOM's text and no element is made of them; clicking the
// moved inlined call (operator<<) in A selects its counterpart in B and
// opens the source at the call site; the page adds one global.
func TestDiffPageNames(t *testing.T) {
	browsertest.Need(t)
	a, b, src := viewtest.HostileFiles(t)
	o := view.Options{Replace: []view.Replacement{{Old: "/src", New: src}}}
	tb := openPage(t, writeDiffPage(t, a, b, o))
	if got := eval[[]string](tb, procLabels); !slices.Equal(got, []string{viewtest.NameTemplate, "main", viewtest.NameScript}) {
		t.Errorf("procedures listed %q", got)
	}
	if n := eval[int](tb, `document.querySelectorAll('#x, body b:not(.fact b), header code b').length`); n != 0 {
		t.Errorf("%d elements made from a name", n)
	}
	if h := eval[string](tb, `document.querySelector('header .name-a').textContent`); h != a {
		t.Errorf("A's name in the header: %q", h)
	}
	// The template method's removed loop, then main's moved call.
	tb.Do(chromedp.Click(chromedp.Search(`//ol[contains(@class,"procs")]//li[@data-proc="1"]`)))
	if r := rowWith(rowsOf(tb, 0), viewtest.NameTemplate); r == "" {
		t.Errorf("A's tree lacks %q: %q", viewtest.NameTemplate, rowsOf(tb, 0))
	}
	if line := eval[string](tb, `document.querySelector('table.src tr[data-line="11"] td.code').firstChild.textContent`); line != "  for (int i = 0; i < n && i < 9; i++)" {
		t.Errorf("x.cc line 11 reads %q", line)
	}
	tb.Do(chromedp.Click(chromedp.Search(`//ol[contains(@class,"procs")]//li[.//span[text()="main"]]`)))
	moved := "[inlined] " + viewtest.NameOperator + " (called at x.cc:20)"
	tb.Do(chromedp.Click(chromedp.Search(`(//div[contains(@class,"side-a")]//tr[contains(@class,"ch-mv")])[1]`)))
	a0, b0 := rowsOf(tb, 0), rowsOf(tb, 1)
	if r := rowWith(a0, moved); !strings.Contains(r, "sel") {
		t.Errorf("A's moved call: %q in %q", r, a0)
	}
	if r := rowWith(b0, "[inlined] "+viewtest.NameOperator+" (called at x.cc:22)"); !strings.Contains(r, "sel") || !strings.Contains(r, "ch-mv") {
		t.Errorf("B's counterpart: %q in %q", r, b0)
	}
	if cur := eval[string](tb, `document.querySelector('table.src tr.cur').dataset.line`); cur != "20" {
		t.Errorf("the source opens at line %s, want A's call site 20", cur)
	}
	// And back: B's row selects A's.
	tb.Do(chromedp.Click(chromedp.Search(`(//div[contains(@class,"side-b")]//tr[contains(@class,"ch-mv")])[1]`)))
	if r := rowWith(rowsOf(tb, 0), moved); !strings.Contains(r, "sel") {
		t.Errorf("from B, A's counterpart: %q", r)
	}
	if cur := eval[string](tb, `document.querySelector('table.src tr.cur').dataset.line`); cur != "22" {
		t.Errorf("from B, the source opens at line %s, want B's call site 22", cur)
	}
	// The procedure B added: no tree in A, and a note saying so.
	tb.Do(chromedp.Click(chromedp.Search(`//ol[contains(@class,"procs")]//li[@data-proc="0"]`)))
	if note := eval[string](tb, `document.querySelector('.side-a .side-note').textContent`); note != "not in A: the procedure was added" {
		t.Errorf("an added procedure's A side: %q", note)
	}
	if r := rowWith(rowsOf(tb, 1), viewtest.NameScript); r == "" {
		t.Errorf("B's tree lacks the added procedure: %q", rowsOf(tb, 1))
	}
	if added := tb.AddedGlobals(); !slices.Equal(added, []string{"bloop"}) {
		t.Errorf("the page adds the globals %q, want only bloop", added)
	}
	tb.Screenshot("diff-names.png")
}

// TestDiffPageDirs: the page of two directories has a selector of the
// pairs that differ, which also names the file only in a; choosing a
// pair lists its procedures and opens its first.
func TestDiffPageDirs(t *testing.T) {
	browsertest.Need(t)
	tmp := t.TempDir()
	for _, f := range [][2]string{
		{"a/bin/inline.hpcstruct", "inline-gcc12-O2"}, {"b/bin/inline.hpcstruct", "inline-gcc12-O3"},
		{"a/loops.hpcstruct", "loops-gcc12-O2"}, {"b/loops.hpcstruct", "loops-clang14-O2"},
		{"a/old/hot.hpcstruct", "hot-gcc12-O2"},
	} {
		data, err := os.ReadFile(filepath.Join(goldenDir, f[1]+".hpcstruct"))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(tmp, f[0])

		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := diff.DiffDirs(filepath.Join(tmp, "a"), filepath.Join(tmp, "b"), diff.DiffOptions{Detail: true}, 2)
	if err != nil {
		t.Fatal(err)
	}
	d, err := view.DirDiffPage(r, view.DiffOptions{Sources: repoSources})
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(tmp, "dirs.html")
	f, _ := os.Create(page)
	if err := view.WriteDiff(f, d); err != nil {
		t.Fatal(err)
	}
	f.Close()
	tb := openPage(t, page)
	opts := eval[[]string](tb, `[...document.querySelectorAll('select.pairs option')].map(o => (o.disabled ? '-' : '+') + o.textContent.split(':')[0])`)
	if !slices.Equal(opts, []string{"+bin/inline.hpcstruct", "+loops.hpcstruct", "-old/hot.hpcstruct (only in a)"}) {
		t.Errorf("the pair selector: %q", opts)
	}
	if got := eval[[]string](tb, procLabels); !slices.Equal(got, []string{"inline_poly", "main"}) {
		t.Errorf("the first pair's procedures: %q", got)
	}
	eval[bool](tb, `(() => { const s = document.querySelector('select.pairs'); s.value = '1'; return s.dispatchEvent(new Event('change')); })()`)
	if got := eval[[]string](tb, procLabels); !slices.Equal(got, []string{"collatz_steps", "matmul"}) {
		t.Errorf("loops.hpcstruct's procedures: %q", got)
	}
	if r := rowWith(rowsOf(tb, 0), "loop at loops.c:44"); !strings.Contains(r, "ch-rm") {
		t.Errorf("collatz_steps' inner loop, gone in clang's build: %q", r)
	}
}

// structFile analyses bin in bloop's default mode and writes its
// structure file into the test's directory.
func structFile(t *testing.T, bin string) string {
	t.Helper()
	img, err := pipeline.Open(bin, loader.Options{Workers: 2}, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mod, _ := pipeline.Analyze(img, pipeline.Options{})
	var buf bytes.Buffer
	if err := structure.WriteXML(&buf, []*structure.Module{mod}, false); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(bin)+".hpcstruct")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDiffPageStatuses opens the diff of decide.c by gcc 12 and clang 16
// (testdata/bin-cc): each function with what the compiler decided, a
// filter by status that narrows the list to the inlined function, the
// box that says into which caller, and a function of two procedures
// (checked_total and its .cold part) as one node with both below it.
func TestDiffPageStatuses(t *testing.T) {
	browsertest.Need(t)
	a := structFile(t, testdata+"/bin-cc/decide-gcc12-O2")
	b := structFile(t, testdata+"/bin-cc/decide-clang16-O2")
	tb := openPage(t, writeDiffPage(t, a, b, repoSources))
	statusOf := `[...document.querySelectorAll('ol.procs li')].map(li => li.querySelector('.label').textContent + ':' + li.querySelector('.status').textContent)`
	got := eval[[]string](tb, statusOf)
	for _, want := range []string{"find:inlined", "scale:renamed", "count_pos:renamed", "release:joined", "checked_total:joined", "main:changed"} {
		if !slices.Contains(got, want) {
			t.Errorf("functions %q lack %q", got, want)
		}
	}
	filters := eval[[]string](tb, `[...document.querySelectorAll('.status-filter label')].map(l => l.textContent.trim())`)
	if !slices.Equal(filters, []string{"changed (2)", "renamed (2)", "joined (2)", "inlined (1)"}) {
		t.Errorf("status filter %q", filters)
	}
	// Only the inlined functions.
	eval[bool](tb, `(() => { for (const b of document.querySelectorAll('.status-filter input')) { if (b.dataset.status !== 'inlined') b.click(); } return true; })()`)
	if got := eval[[]string](tb, procLabels); !slices.Equal(got, []string{"find"}) {
		t.Errorf("inlined only: %q", got)
	}
	tb.Do(chromedp.Click(chromedp.Search(`//ol[contains(@class,"procs")]//li[.//span[text()="find"]]`)))
	box := eval[string](tb, `document.querySelector('.decisions').textContent`)
	if !strings.Contains(box, "inlined: out of line in A; in B only inlined, into main") {
		t.Errorf("find's decisions: %q", box)
	}
	// Everything again; checked_total's two procedures in A.
	eval[bool](tb, `(() => { for (const b of document.querySelectorAll('.status-filter input')) { if (!b.checked) b.click(); } return true; })()`)
	tb.Do(chromedp.Click(chromedp.Search(`//ol[contains(@class,"procs")]//li[.//span[text()="checked_total"]]`)))
	rowsA := rowsOf(tb, 0)
	if len(rowsA) < 3 || !strings.HasPrefix(rowsA[0], "checked_total|") || rowWith(rowsA, "checked_total.cold") == "" {
		t.Errorf("checked_total in A: %q", rowsA)
	}
	if box := eval[string](tb, `document.querySelector('.decisions').textContent`); !strings.Contains(box, "A: checked_total, checked_total.cold, B: checked_total") {
		t.Errorf("checked_total's decisions: %q", box)
	}
	tb.Screenshot("diff-statuses.png")
}
