package pages

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"bloop/browser/browsertest"
	"bloop/internal/rectest"
	"bloop/profile"
	"bloop/report"
	"bloop/view"
)

// record runs argv under bloop's sampler and attributes the recording,
// analysing only the program's own binary (libraries keep their symbols:
// quicker, and the same profile for the page and the text).
func record(t *testing.T, argv ...string) *profile.Profile {
	t.Helper()
	browsertest.Need(t)
	path := rectest.Record(t, argv...)
	p, err := profile.Build(path, profile.Options{Analyze: func(m string) bool { return m == argv[0] }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeTestPage writes p's report page into the test's directory.
func writeTestPage(t *testing.T, p *profile.Profile, o view.Options) string {
	t.Helper()
	var buf bytes.Buffer
	if err := view.WriteReport(&buf, p, o); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "report.html", buf.Bytes())
}

// TestReportPageHot opens the page of testdata's hot program, whose time
// is in the loop of hot_loop inlined into main: the loop's frame and its
// source lines hold at least 95% of the samples, clicking the frame zooms
// to it and opens hot.c at the loop's line, and a search finds the
// inlined call and a procedure.
func TestReportPageHot(t *testing.T) {
	bin, _ := filepath.Abs(testdata + "/bin/hot-gcc12-O2")
	p := record(t, bin, "200000000")
	if p.Samples < 50 {
		t.Fatalf("only %d samples", p.Samples)
	}
	tb := openPage(t, writeTestPage(t, p, repoSources))
	const loop = "loop at hot.c:7"
	frame := `[...document.querySelectorAll('.frames .fr')].find(e => e.textContent === '` + loop + `')`
	share := eval[float64](tb, `(() => { const f = `+frame+`; return f ? (f.getBoundingClientRect().width + 1) / document.querySelector('.frames').clientWidth : 0 })()`)
	if share < 0.95 {
		t.Errorf("the frame of %s is %.1f%% of the graph's width, want >= 95%%", loop, 100*share)
	}

	tip := eval[string](tb, `(() => { const f = `+frame+`; const r = f.getBoundingClientRect(); f.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, clientX: r.x + 5, clientY: r.y + 5})); return document.querySelector('.tip').hidden ? '' : document.querySelector('.tip').innerText })()`)
	for _, s := range []string{loop, "incl ", "excl ", "/src/hot.c:7", "lines 7-"} {
		if !strings.Contains(tip, s) {
			t.Errorf("the loop's tooltip lacks %q:\n%s", s, tip)
		}
	}
	tb.Do(chromedp.Click(chromedp.Search(`//div[contains(@class,"fr") and text()="` + loop + `"]`)))
	crumbs := eval[[]string](tb, `[...document.querySelectorAll('.crumb')].map(b => b.textContent)`)
	if len(crumbs) < 2 || crumbs[len(crumbs)-1] != loop {
		t.Errorf("after the click, the breadcrumb is %q: not zoomed to %s", crumbs, loop)
	}
	title := eval[string](tb, `document.querySelector('.src-title .path').textContent`)
	cur := eval[string](tb, `(document.querySelector('table.src tr.cur') || {dataset: {}}).dataset.line || ''`)
	if title != "/src/hot.c" || cur != "7" {
		t.Errorf("after the click, the source pane shows %q at line %q, want /src/hot.c at 7", title, cur)
	}
	// The loop's lines, as the gutter marks them, and their own samples.
	inLoop := eval[[]string](tb, `[...document.querySelectorAll('table.src tbody tr')].filter(tr => tr.querySelector('.lc.in')).map(tr => tr.dataset.line + ':' + tr.cells[2].textContent)`)
	var onLines uint64
	for _, s := range inLoop {
		n, _ := strconv.ParseUint(s[strings.IndexByte(s, ':')+1:], 10, 64)
		onLines += n
	}
	if len(inLoop) < 3 || float64(onLines) < 0.95*float64(p.Total) {
		t.Errorf("the loop's marked lines %v hold %d of %d samples, want >= 95%%", inLoop, onLines, p.Total)
	}
	if b := eval[string](tb, `[...document.querySelectorAll('table.src tr[data-line="27"] .inl')].map(e => e.textContent).join()`); b != "inlined: hot_loop" {
		t.Errorf("hot.c line 27's inlined-call badges read %q, want hot_loop's", b)
	}
	tb.Screenshot("report-hot.png")

	// The flame graph toggle puts the root at the bottom.
	tb.Do(chromedp.Click(chromedp.CSS("button.mode")))
	if rootLow := eval[bool](tb, `(() => { const fs = [...document.querySelectorAll('.frames .fr')]; const y = f => f.getBoundingClientRect().y; return document.querySelector('.frames').classList.contains('flame') && y(fs[0]) > y(fs[fs.length - 1]) })()`); !rootLow {
		t.Error("after the toggle, the root is not below its callees")
	}
	tb.Do(chromedp.Click(chromedp.CSS("button.mode")))
	tb.Do(chromedp.Click(chromedp.CSS(".crumb")))
	tb.Do(chromedp.SendKeys(chromedp.CSS("input.search"), "hot_loop"))
	hits := eval[[]string](tb, `[...document.querySelectorAll('.fr.hit')].map(f => f.textContent)`)
	info := eval[string](tb, `document.querySelector('.flame-pane .info').textContent`)
	matched := eval[float64](tb, `+document.querySelector('.flame-pane .info').dataset.share`)
	if len(hits) != 1 || hits[0] != "[inlined] hot_loop (called at hot.c:27)" || matched < 0.95 {
		t.Errorf("search hot_loop: frames %q, %q", hits, info)
	}
	eval[bool](tb, `(() => { document.querySelector('input.search').value = ''; return true })()`)
	tb.Do(chromedp.SendKeys(chromedp.CSS("input.search"), "^main"))
	hits = eval[[]string](tb, `[...document.querySelectorAll('.fr.hit')].map(f => f.textContent)`)
	if len(hits) != 1 || hits[0] != "main  [hot-gcc12-O2]" {
		t.Errorf("search ^main: frames %q", hits)
	}
}

// textRow is one row of a text view: counts, depth and label.
type textRow struct {
	incl, excl string
	depth      int
	label      string
}

var rowRE = regexp.MustCompile(`^\s*(\d+)\s+\S+%\s+(\d+)\s+\S+%  (.*)$`)

// textRows parses a text view's rows (after its two heading lines);
// flat rows keep their kind column in the label.
func textRows(text string) []textRow {
	var rows []textRow
	for _, l := range strings.Split(text, "\n") {
		m := rowRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		label := strings.TrimLeft(m[3], " ")
		rows = append(rows, textRow{m[1], m[2], (len(m[3]) - len(label)) / 2, label})
	}
	return rows
}

// pageRows reads the rows of the page's table as the text prints them.
func pageRows(tb *tab, flat bool) []textRow {
	tb.T.Helper()
	cells := eval[[][]string](tb, `[...document.querySelectorAll('table.view tbody tr')].map(tr => [...tr.cells].map(c => c.querySelector('.label') ? c.querySelector('.label').textContent : c.textContent).concat([tr.dataset.depth || '0']))`)
	var rows []textRow
	for _, c := range cells {
		r := textRow{incl: c[0], excl: c[2]}
		if flat {
			// kind, scope, in: as report.Flat prints them.
			r.label = fmt.Sprintf("%-8s %s", c[4], c[5])
			if c[6] != "" {
				r.label += "  in " + c[6]
			}
		} else {
			r.label = c[4]
			r.depth, _ = strconv.Atoi(c[5])
		}
		rows = append(rows, r)
	}
	return rows
}

func diffRows(t *testing.T, what string, page, text []textRow) {
	t.Helper()
	if len(page) != len(text) {
		t.Errorf("%s: the page has %d rows, the text %d", what, len(page), len(text))
	}
	for i := 0; i < len(page) && i < len(text); i++ {
		if page[i] != text[i] {
			t.Errorf("%s: row %d: page %+v, text %+v", what, i, page[i], text[i])
			return
		}
	}
}

// TestReportPageViews: the page's three tables, fully expanded and cut
// at the same minimum, have the rows of bloop report's text views, in
// their order, for the unwinder corpus program (recursion, qsort
// callbacks, libm, threads); so has each thread's top-down table.
func TestReportPageViews(t *testing.T) {
	bin, _ := filepath.Abs(testdata + "/prof/bin/unwind-gcc12-O2")
	p := record(t, bin, "300")
	tb := openPage(t, writeTestPage(t, p, repoSources))
	setMin := func(v string) {
		eval[bool](tb, `(() => { const m = document.querySelector('input.min'); m.value = '`+v+`'; m.dispatchEvent(new Event('input')); return true })()`)
	}
	for _, min := range []float64{1, 0.2} {
		setMin(strconv.FormatFloat(min, 'f', -1, 64))
		o := report.Options{MinPercent: min}
		var top, bottom, flat bytes.Buffer
		report.TopDown(&top, p, o, false)
		report.BottomUp(&bottom, p, o)
		report.Flat(&flat, p, o)
		for _, v := range []struct {
			tab  string
			text string
		}{{"top", top.String()}, {"bottom", bottom.String()}, {"flat", flat.String()}} {
			tb.Do(chromedp.Click(chromedp.CSS(`button.tab[data-view="` + v.tab + `"]`)))
			if v.tab != "flat" {
				tb.Do(chromedp.Click(chromedp.CSS("button.expand")))
			}
			diffRows(t, fmt.Sprintf("%s view, min %v%%", v.tab, min), pageRows(tb, v.tab == "flat"), textRows(v.text))
		}
	}
	// Sorted by excl, the flat rows are in decreasing excl.
	tb.Do(chromedp.Click(chromedp.CSS(`button.tab[data-view="flat"]`)), chromedp.Click(chromedp.CSS(`th[data-sort="excl"]`)))
	var excl []int
	for _, r := range pageRows(tb, true) {
		n, _ := strconv.Atoi(r.excl)
		excl = append(excl, n)
	}
	if len(excl) < 5 || !sort.SliceIsSorted(excl, func(i, j int) bool { return excl[i] > excl[j] }) {
		t.Errorf("flat rows sorted by excl: %v", excl)
	}
	tb.Do(chromedp.Click(chromedp.CSS(`th[data-sort="incl"]`)))
	// Filtered, the top-down rows are the matches and the paths to them.
	tb.Do(chromedp.Click(chromedp.CSS(`button.tab[data-view="top"]`)), chromedp.SendKeys(chromedp.CSS("input.filter"), "cmp_exp"))
	type row struct {
		hit   bool
		depth int
		label string
	}
	var rows []row
	for _, r := range eval[[][]string](tb, `[...document.querySelectorAll('table.view tbody tr')].map(tr => [tr.classList.contains('hit') ? '+' : '', tr.dataset.depth, tr.querySelector('.label').textContent])`) {
		d, _ := strconv.Atoi(r[1])
		rows = append(rows, row{r[0] == "+", d, r[2]})
	}
	hits := 0
	for i, r := range rows {
		switch {
		case r.hit && !strings.Contains(r.label, "cmp_exp"):
			t.Errorf("filtered row %+v is marked but does not match", r)
		case r.hit:
			hits++
		case i+1 == len(rows) || rows[i+1].depth != r.depth+1:
			t.Errorf("filtered row %+v is neither a match nor on the path to one", r)
		}
	}
	if hits == 0 {
		t.Errorf("filter cmp_exp: no match among %+v", rows)
	}
	eval[bool](tb, `(() => { const f = document.querySelector('input.filter'); f.value = ''; f.dispatchEvent(new Event('input')); return true })()`)
	// Each thread's top-down table is its tree in bloop report --threads.
	var threads bytes.Buffer
	report.TopDown(&threads, p, report.Options{MinPercent: 0.2}, true)
	want := textRows(threads.String())
	n := eval[int](tb, `document.querySelector('select.thread').options.length`)
	if n != len(p.ThreadTrees())+1 {
		t.Errorf("%d threads to choose from, want all and %d", n, len(p.ThreadTrees()))
	}
	tb.Do(chromedp.Click(chromedp.CSS(`button.tab[data-view="top"]`)))
	var got []textRow
	for i := 1; i < n; i++ {
		eval[bool](tb, `(() => { const s = document.querySelector('select.thread'); s.value = '`+strconv.Itoa(i)+`'; s.dispatchEvent(new Event('change')); return true })()`)
		tb.Do(chromedp.Click(chromedp.CSS("button.expand")))
		got = append(got, pageRows(tb, false)...)
	}
	diffRows(t, "top-down view per thread", got, want)
	tb.Screenshot("report-views.png")
}
