package report

import (
	"bytes"
	"strings"
	"testing"

	"bloop/profile"
)

// synthetic builds a profile from hand-made scope paths: main calls
// work (a loop with an inlined helper) from two lines, and rec recurses.
func synthetic() *profile.Profile {
	p := &profile.Profile{Root: &profile.Node{Label: "<program>"}, Threads: map[uint32]*profile.Node{}, Reasons: map[string]uint64{}}
	mainP := &profile.Elem{Kind: profile.ElemProc, Name: "main", Module: "prog", File: "m.c", Line: 1}
	workP := &profile.Elem{Kind: profile.ElemProc, Name: "work", Module: "prog", File: "w.c", Line: 10}
	recP := &profile.Elem{Kind: profile.ElemProc, Name: "rec", Module: "prog", File: "r.c", Line: 30}
	loop := &profile.Elem{Kind: profile.ElemLoop, File: "w.c", Line: 12}
	inl := &profile.Elem{Kind: profile.ElemInline, Name: "helper", File: "h.h", Line: 3, CallFile: "w.c", CallLine: 13}
	call5 := &profile.Elem{Kind: profile.ElemStmt, File: "m.c", Line: 5}
	call6 := &profile.Elem{Kind: profile.ElemStmt, File: "m.c", Line: 6}
	call7 := &profile.Elem{Kind: profile.ElemStmt, File: "m.c", Line: 7}
	s4 := &profile.Elem{Kind: profile.ElemStmt, File: "h.h", Line: 4}
	s11 := &profile.Elem{Kind: profile.ElemStmt, File: "w.c", Line: 11}
	s13 := &profile.Elem{Kind: profile.ElemStmt, File: "w.c", Line: 13}
	s31 := &profile.Elem{Kind: profile.ElemStmt, File: "r.c", Line: 31}
	s32 := &profile.Elem{Kind: profile.ElemStmt, File: "r.c", Line: 32}
	add := func(n int, tid uint32, path ...*profile.Elem) {
		for i := 0; i < n; i++ {
			p.InsertScopes(tid, path, 0, 1)
			p.Samples++
		}
	}
	add(6, 1, mainP, call5, workP, loop, inl, s4) // 6 in the inlined helper in the loop
	add(2, 1, mainP, call6, workP, loop, s11)     // 2 in the loop itself, called from line 6
	add(1, 1, mainP, call6, workP, s13)           // 1 in work outside its loop
	add(1, 2, mainP, s11)                         // 1 in main (another thread)
	add(1, 1, mainP, call7, recP, s32, recP, s32, recP, s31)
	return p
}

func TestTopDown(t *testing.T) {
	var buf bytes.Buffer
	TopDown(&buf, synthetic(), Options{}, false)
	want := `incl: samples in the scope and everything below it; excl: samples in the scope itself, in no loop, inlined call or callee shown below it
    incl   incl%     excl   excl%  scope
      11  100.0%        0    0.0%  <program>
      11  100.0%        1    9.1%    main  [prog]
       9   81.8%        1    9.1%      work  [prog]
       8   72.7%        2   18.2%        loop at w.c:12
       6   54.5%        6   54.5%          [inlined] helper (called at w.c:13)
       1    9.1%        1    9.1%      rec (recursion, up to 3 levels)  [prog]
`
	if got := buf.String(); got != want {
		t.Errorf("top-down:\n%s\nwant:\n%s", got, want)
	}
	buf.Reset()
	TopDown(&buf, synthetic(), Options{Lines: true, MinPercent: 50}, true)
	for _, s := range []string{"thread 1", "m.c:5", "h.h:4", "inlined call, callee or line shown"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("per-thread view with lines lacks %q:\n%s", s, buf.String())
		}
	}
	if strings.Contains(buf.String(), "m.c:6") || strings.Contains(buf.String(), "thread 2") {
		t.Errorf("scope under 50%% shown:\n%s", buf.String())
	}
}

func TestBottomUp(t *testing.T) {
	var buf bytes.Buffer
	BottomUp(&buf, synthetic(), Options{})
	want := `first level: each sample's innermost scope (loop, inlined call or procedure), excl = its samples; below it: the scopes and callers around it, incl = samples that came through them
    incl   incl%     excl   excl%  scope
      11  100.0%        0    0.0%  <program>
       6   54.5%        6   54.5%    [inlined] helper (called at w.c:13)
       6   54.5%        0    0.0%      loop at w.c:12
       6   54.5%        0    0.0%        work  [prog]
       6   54.5%        0    0.0%          main  [prog]
       2   18.2%        2   18.2%    loop at w.c:12
       2   18.2%        0    0.0%      work  [prog]
       2   18.2%        0    0.0%        main  [prog]
       1    9.1%        1    9.1%    main  [prog]
       1    9.1%        1    9.1%    rec (recursion, up to 3 levels)  [prog]
       1    9.1%        0    0.0%      main  [prog]
       1    9.1%        1    9.1%    work  [prog]
       1    9.1%        0    0.0%      main  [prog]
`
	if got := buf.String(); got != want {
		t.Errorf("bottom-up:\n%s\nwant:\n%s", got, want)
	}
}

func TestFlat(t *testing.T) {
	cases := []struct {
		lines bool
		want  string
	}{
		{false, `incl: samples with the scope on their call path, once each; excl: samples whose innermost scope (loop, inlined call or procedure) it is
    incl   incl%     excl   excl%  kind     scope
      11  100.0%        1    9.1%  proc     main  [prog]
       9   81.8%        1    9.1%  proc     work  [prog]
       8   72.7%        2   18.2%  loop     loop at w.c:12  in work
       6   54.5%        6   54.5%  inlined  [inlined] helper (called at w.c:13)  in work
       1    9.1%        1    9.1%  proc     rec  [prog]
`},
		// Lines are entries of the function whose code they are; w.c:11
		// is a line of main and of work.
		{true, `incl: samples with the scope on their call path, once each; excl: samples whose innermost scope (loop, inlined call, procedure or line) it is
    incl   incl%     excl   excl%  kind     scope
      11  100.0%        0    0.0%  proc     main  [prog]
       9   81.8%        0    0.0%  proc     work  [prog]
       8   72.7%        0    0.0%  loop     loop at w.c:12  in work
       6   54.5%        0    0.0%  inlined  [inlined] helper (called at w.c:13)  in work
       6   54.5%        6   54.5%  line     h.h:4  in helper
       6   54.5%        0    0.0%  line     m.c:5  in main
       3   27.3%        0    0.0%  line     m.c:6  in main
       2   18.2%        2   18.2%  line     w.c:11  in work
       1    9.1%        0    0.0%  proc     rec  [prog]
       1    9.1%        0    0.0%  line     m.c:7  in main
       1    9.1%        1    9.1%  line     r.c:31  in rec
       1    9.1%        0    0.0%  line     r.c:32  in rec
       1    9.1%        1    9.1%  line     w.c:11  in main
       1    9.1%        1    9.1%  line     w.c:13  in work
`},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		Flat(&buf, synthetic(), Options{Lines: c.lines})
		if got := buf.String(); got != c.want {
			t.Errorf("flat, lines %v:\n%s\nwant:\n%s", c.lines, got, c.want)
		}
	}
}

// TestEventColumns: with several events, each view shows every event's
// incl and excl beside the shown event's, from the same trees.
func TestEventColumns(t *testing.T) {
	p := &profile.Profile{Root: &profile.Node{Label: "<program>"}, Threads: map[uint32]*profile.Node{}}
	p.Meta.Events = []string{"cpu-clock", "page-faults"}
	p.EventTotals = make([]uint64, 2)
	mainP := &profile.Elem{Kind: profile.ElemProc, Name: "main", Module: "prog"}
	work := &profile.Elem{Kind: profile.ElemProc, Name: "work", Module: "prog"}
	loop := &profile.Elem{Kind: profile.ElemLoop, File: "w.c", Line: 12}
	p.InsertScopes(1, []*profile.Elem{mainP, work, loop}, 0, 3000)
	p.InsertScopes(1, []*profile.Elem{mainP, work, loop}, 1, 7)
	p.InsertScopes(1, []*profile.Elem{mainP}, 1, 5)
	p.InsertScopes(1, []*profile.Elem{mainP, work}, 0, 1000)
	var buf bytes.Buffer
	TopDown(&buf, p, Options{}, false)
	want := `  cpu-clock                        page-faults
    incl   incl%     excl   excl%          incl         excl  scope
    4000  100.0%        0    0.0%            12            0  <program>
    4000  100.0%        0    0.0%            12            5    main  [prog]
    4000  100.0%     1000   25.0%             7            0      work  [prog]
    3000   75.0%     3000   75.0%             7            7        loop at w.c:12
`
	if got := buf.String(); !strings.HasSuffix(got, want) {
		t.Errorf("top-down:\n%s\nwant:\n%s", got, want)
	}
	buf.Reset()
	Flat(&buf, p, Options{})
	if !strings.Contains(buf.String(), "    4000  100.0%        0    0.0%            12            5  proc     main  [prog]") {
		t.Errorf("flat:\n%s", buf.String())
	}
	bu := p.BottomUp(false)
	if bu.Incl != 4000 || at(bu.EvIncl, 1) != 12 {
		t.Errorf("bottom-up root %d, page-faults %v", bu.Incl, bu.EvIncl)
	}
}
