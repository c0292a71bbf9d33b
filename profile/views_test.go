package profile

import (
	"bytes"
	"strings"
	"testing"
)

// synthetic builds a profile from hand-made scope paths: main calls
// work (a loop with an inlined helper) from two lines, and rec recurses.
func synthetic() *Profile {
	p := &Profile{Root: &Node{Label: "<program>"}, Threads: map[uint32]*Node{}, Reasons: map[string]uint64{}}
	mainP := &Elem{Kind: ElemProc, Name: "main", Module: "prog", File: "m.c", Line: 1}
	workP := &Elem{Kind: ElemProc, Name: "work", Module: "prog", File: "w.c", Line: 10}
	recP := &Elem{Kind: ElemProc, Name: "rec", Module: "prog", File: "r.c", Line: 30}
	loop := &Elem{Kind: ElemLoop, File: "w.c", Line: 12}
	inl := &Elem{Kind: ElemInline, Name: "helper", File: "h.h", Line: 3, CallFile: "w.c", CallLine: 13}
	call5 := &Elem{Kind: ElemStmt, File: "m.c", Line: 5}
	call6 := &Elem{Kind: ElemStmt, File: "m.c", Line: 6}
	call7 := &Elem{Kind: ElemStmt, File: "m.c", Line: 7}
	s4 := &Elem{Kind: ElemStmt, File: "h.h", Line: 4}
	s11 := &Elem{Kind: ElemStmt, File: "w.c", Line: 11}
	s31 := &Elem{Kind: ElemStmt, File: "r.c", Line: 31}
	s32 := &Elem{Kind: ElemStmt, File: "r.c", Line: 32}
	add := func(n int, tid uint32, leafStart int, path ...*Elem) {
		for i := 0; i < n; i++ {
			p.insert(tid, path, leafStart)
			p.Samples++
		}
	}
	add(6, 1, 2, mainP, call5, workP, loop, inl, s4) // 6 in the inlined helper in the loop
	add(2, 1, 2, mainP, call6, workP, loop, s11)     // 2 in the loop itself, called from line 6
	add(1, 2, 0, mainP, s11)                         // 1 in main (another thread)
	add(1, 1, 6, mainP, call7, recP, s32, recP, s32, recP, s31)
	return p
}

func TestTopDown(t *testing.T) {
	var buf bytes.Buffer
	synthetic().WriteTopDown(&buf, ViewOptions{}, false)
	want := `    incl   incl%     excl   excl%  scope
      10  100.0%        0    0.0%  <program>
      10  100.0%        1   10.0%    main  [prog]
       8   80.0%        8   80.0%      work  [prog]
       8   80.0%        8   80.0%        loop at w.c:12
       6   60.0%        6   60.0%          [inlined] helper (called at w.c:13)
       1   10.0%        1   10.0%      rec (recursion, up to 3 levels)  [prog]
`
	if got := buf.String(); got != want {
		t.Errorf("top-down:\n%s\nwant:\n%s", got, want)
	}
	buf.Reset()
	synthetic().WriteTopDown(&buf, ViewOptions{Lines: true, MinPercent: 50}, true)
	for _, s := range []string{"thread 1", "m.c:5", "h.h:4"} {
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
	synthetic().WriteBottomUp(&buf, ViewOptions{})
	want := `    incl   incl%     excl   excl%  scope
      10  100.0%        0    0.0%  <program>
       6   60.0%        6   60.0%    [inlined] helper (called at w.c:13)
       6   60.0%        0    0.0%      work  [prog]
       6   60.0%        0    0.0%        main  [prog]
       2   20.0%        2   20.0%    work  [prog]
       2   20.0%        0    0.0%      main  [prog]
       1   10.0%        1   10.0%    main  [prog]
       1   10.0%        1   10.0%    rec (recursion, up to 3 levels)  [prog]
       1   10.0%        0    0.0%      main  [prog]
`
	if got := buf.String(); got != want {
		t.Errorf("bottom-up:\n%s\nwant:\n%s", got, want)
	}
}

func TestFlat(t *testing.T) {
	var buf bytes.Buffer
	synthetic().WriteFlat(&buf, ViewOptions{})
	want := `    incl   incl%     excl   excl%  kind     scope
      10  100.0%        1   10.0%  proc     main  [prog]
       8   80.0%        8   80.0%  proc     work  [prog]
       8   80.0%        8   80.0%  loop     loop at w.c:12  in work
       6   60.0%        6   60.0%  inlined  [inlined] helper (called at w.c:13)  in work
       1   10.0%        1   10.0%  proc     rec  [prog]
`
	if got := buf.String(); got != want {
		t.Errorf("flat:\n%s\nwant:\n%s", got, want)
	}
}
