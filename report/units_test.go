package report

import (
	"bytes"
	"strings"
	"testing"

	"bloop/profile"
)

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		ns   uint64
		want string
	}{
		{0, "0"},
		{1, "1ns"},
		{999, "999ns"},
		{1000, "1.00µs"},
		{1234, "1.23µs"},
		{1235, "1.24µs"}, // half up, as the page rounds
		{12_345, "12.3µs"},
		{999_499, "999µs"},
		{1_000_000, "1.00ms"},
		{26_666_664, "26.7ms"},
		{100_000_000, "100ms"},
		{999_600_000, "1000ms"}, // three digits of the unit chosen before rounding
		{1_000_000_000, "1.00s"},
		{1_125_000_000, "1.13s"},
		{61_500_000_000, "61.5s"},
		{3_600_000_000_000, "3600s"},
	} {
		if got := Duration(c.ns); got != c.want {
			t.Errorf("Duration(%d) = %q, want %q", c.ns, got, c.want)
		}
	}
}

// TestTimeColumns: in a perf.data file's views, a clock's periods
// (nanoseconds) are shown as time, another event's as counts; the
// summary gives the clock's total as time.
func TestTimeColumns(t *testing.T) {
	p := &profile.Profile{Root: &profile.Node{Label: "<program>"}, Threads: map[uint32]*profile.Node{}}
	p.Meta.Perf = true
	p.Meta.Command = []string{"prog"}
	p.Meta.Events = []string{"cpu-clock", "page-faults"}
	p.EventTotals = make([]uint64, 2)
	p.EventSamples = []uint64{4, 2}
	mainP := &profile.Elem{Kind: profile.ElemProc, Name: "main", Module: "prog"}
	work := &profile.Elem{Kind: profile.ElemProc, Name: "work", Module: "prog"}
	p.InsertScopes(1, []*profile.Elem{mainP, work}, 0, 3_000_000_000)
	p.InsertScopes(1, []*profile.Elem{mainP}, 0, 1_001_001)
	p.InsertScopes(1, []*profile.Elem{mainP, work}, 1, 7)
	p.EventTotals = []uint64{3_001_001_001, 7}
	var buf bytes.Buffer
	TopDown(&buf, p, Options{}, false)
	want := `  cpu-clock                        page-faults
    incl   incl%     excl   excl%          incl         excl  scope
   3.00s  100.0%        0    0.0%             7            0  <program>
   3.00s  100.0%   1.00ms    0.0%             7            0    main  [prog]
   3.00s  100.0%    3.00s  100.0%             7            7      work  [prog]
`
	if got := buf.String(); !strings.HasSuffix(got, want) {
		t.Errorf("top-down:\n%s\nwant:\n%s", got, want)
	}
	buf.Reset()
	Summary(&buf, p)
	for _, s := range []string{"event:    cpu-clock: 4 samples, 3.00s  (shown: incl and excl are its time)\n",
		"event:    page-faults: 2 samples, 7 events (period sum)\n"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("summary lacks %q:\n%s", s, buf.String())
		}
	}
	buf.Reset()
	Flat(&buf, p, Options{})
	if !strings.Contains(buf.String(), "   3.00s  100.0%    3.00s  100.0%             7            7  proc     work  [prog]") {
		t.Errorf("flat:\n%s", buf.String())
	}
}
