package pages

import (
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"bloop/browser/browsertest"
	"bloop/internal/viewtest"
)

// TestReportPageNames feeds the page names that are markup (C++
// templates and operators, quotes, an end tag of a script element) and
// requires the DOM's text to be those names, with no element made from
// them; a source found through -R shows its lines as text, and one not
// found says so while the rest of the page keeps working. The page adds
// one global, bloop.
func TestReportPageNames(t *testing.T) {
	browsertest.Need(t)
	tb := openPage(t, writeTestPage(t, viewtest.Synthetic(), testSources))
	frames := eval[[]string](tb, `[...document.querySelectorAll('.frames .fr')].map(f => f.textContent)`)
	for _, want := range []string{viewtest.NameTemplate + "  [libstdc++.so.6]", viewtest.NameOperator + "  [prog]", viewtest.NameScript + "  [prog]", "[inlined] helper (called at w.c:7)", "loop at w.c:5"} {
		if !slices.Contains(frames, want) {
			t.Errorf("no frame reads %q; frames: %q", want, frames)
		}
	}
	if n := eval[int](tb, `document.querySelectorAll('#x, .frames b, table.view b, table.src b').length`); n != 0 {
		t.Errorf("%d elements made from a name", n)
	}
	if cmd := eval[string](tb, `document.querySelector('header .command').textContent`); cmd != "./prog a<b" {
		t.Errorf("command %q", cmd)
	}

	tb.Do(chromedp.Click(chromedp.CSS(`button.tab[data-view="flat"]`)))
	rows := eval[[]string](tb, `[...document.querySelectorAll('table.view tbody tr')].map(tr => tr.cells[5].textContent + '|' + tr.cells[6].textContent)`)
	if !slices.Contains(rows, viewtest.NameScript+"  [prog]|") || !slices.Contains(rows, "[inlined] helper (called at w.c:7)|work") {
		t.Errorf("flat rows: %q", rows)
	}
	// operator<< is defined in m.c (found through -R /src=testdata/src).
	tb.Do(chromedp.Click(chromedp.Search(`//table[contains(@class,"view")]//tr[contains(., "operator")]`)))
	line := eval[string](tb, `document.querySelector('table.src tr[data-line="10"] td.code').textContent`)
	if line != `  return o << "<&>";` {
		t.Errorf("m.c line 10 reads %q", line)
	}
	self := eval[string](tb, `document.querySelector('table.src tr[data-line="10"]').cells[2].textContent`)
	if self != "4" {
		t.Errorf("m.c line 10 has %q samples of its own, want 4", self)
	}
	// helper is in h.h, which is nowhere: the pane says so.
	tb.Do(chromedp.Click(chromedp.Search(`//table[contains(@class,"view")]//tr[contains(., "helper")]`)))
	missing := eval[string](tb, `(document.querySelector('.src-missing') || {}).textContent || ''`)
	if want := viewData + "/src/h.h: not found"; !strings.HasPrefix(missing, want) {
		t.Errorf("h.h's pane says %q", missing)
	}
	// The page still works: the inlined call's line 3 has its samples.
	if got := eval[string](tb, `document.querySelector('table.src tr[data-line="3"]').cells[2].textContent`); got != "60" {
		t.Errorf("h.h line 3 has %q samples of its own, want 60", got)
	}
	tb.Screenshot("report-names.png")

	if added := tb.AddedGlobals(); !slices.Equal(added, []string{"bloop"}) {
		t.Errorf("the page adds the globals %q, want only bloop", added)
	}
}
