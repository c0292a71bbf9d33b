package pages

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"bloop/browser/browsertest"
	"bloop/profile"
	"bloop/report"
)

// TestReportPageTime: a perf.data file's task-clock (nanoseconds) is
// shown as time in the page's tables as in the text views, row for row,
// and the page's bloop.time formats every value as report.Duration does
// (rounding ties alike).
func TestReportPageTime(t *testing.T) {
	browsertest.Need(t)
	bin, _ := filepath.Abs(testdata + "/prof/bin")
	p, err := profile.Build(repo+"/perfevent/testdata/fp.data", profile.Options{Event: "task-clock", ModuleDirs: []string{bin},
		Analyze: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	tb := openPage(t, writeTestPage(t, p, repoSources))
	eval[bool](tb, `(() => { const m = document.querySelector('input.min'); m.value = '0'; m.dispatchEvent(new Event('input')); return true })()`)
	o := report.Options{MinPercent: 0}
	var top, flat bytes.Buffer
	report.TopDown(&top, p, o, false)
	report.Flat(&flat, p, o)
	others := len(p.Meta.EventNames()) - 1
	for _, v := range []struct{ tab, text string }{{"top", top.String()}, {"flat", flat.String()}} {
		tb.Do(chromedp.Click(chromedp.CSS(`button.tab[data-view="` + v.tab + `"]`)))
		if v.tab != "flat" {
			tb.Do(chromedp.Click(chromedp.CSS("button.expand")))
		}
		want := textRowsCols(v.text, others)
		if len(want) < 3 || !strings.HasSuffix(want[0].incl, "ms") {
			t.Fatalf("%s view: the text's rows %+v are not in time", v.tab, want)
		}
		diffRows(t, v.tab+" view of task-clock", pageRows(tb, v.tab == "flat"), want)
	}
	var ns []uint64
	for _, base := range []uint64{1, 1e3, 1e6, 1e9} {
		for _, m := range []uint64{1, 5, 9, 10, 99, 100, 999, 1005, 1125, 1235, 9995, 99950, 999500, 999999} {
			ns = append(ns, base*m)
		}
	}
	ns = append(ns, 0, 26_666_664, 3_600_000_000_000)
	js, _ := json.Marshal(ns)
	got := eval[[]string](tb, string(js)+`.map(v => bloop.time(v))`)
	if len(got) != len(ns) {
		t.Fatalf("bloop.time gave %d values for %d", len(got), len(ns))
	}
	for i, v := range ns {
		if got[i] != report.Duration(v) {
			t.Errorf("bloop.time(%d) = %q, report.Duration %q", v, got[i], report.Duration(v))
		}
	}
}

// textRowsCols parses a text view's rows whose values may be time, with
// others other events' columns between the shown event's and the scope
// (the page shows the one metric): the columns are fixed width.
func textRowsCols(text string, others int) []textRow {
	var rows []textRow
	for _, l := range strings.Split(text, "\n") {
		r := []rune(l)
		start := 33 + 27*others + 2
		if len(r) <= start || !strings.HasSuffix(strings.TrimSpace(string(r[9:16])), "%") {
			continue
		}
		incl, excl := strings.TrimSpace(string(r[0:8])), strings.TrimSpace(string(r[17:25]))
		if _, err := strconv.Atoi(incl[:1]); err != nil {
			continue // the columns' names
		}
		rest := string(r[start:])
		label := strings.TrimLeft(rest, " ")
		rows = append(rows, textRow{incl, excl, (len(rest) - len(label)) / 2, label})
	}
	return rows
}
