package profile

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/google/pprof/profile"

	"bloop/sample"
)

// indexedModule is a module whose structure is given, not analysed.
func indexedModule(name string, entries ...indexEntry) *Module {
	m := &Module{Path: "/bin/" + name, Name: name, index: &scopeIndex{entries: entries}}
	m.index.sort()
	m.structOnce.Do(func() {})
	return m
}

// pprofSynthetic attributes hand-made frames: main (m.c) calls work from
// line 5; work has a loop (line 12) holding the inlined helper (h.h) and
// line 11, and line 14 outside the loop; one sample's unwind failed.
func pprofSynthetic() *Profile {
	p := &Profile{Root: &Node{Label: "<program>"}, Threads: map[uint32]*Node{}, Reasons: map[string]uint64{},
		elems: map[elemKey]*Elem{}}
	p.Meta = sample.Meta{Command: []string{"prog"}, Freq: 1000}
	p.selectEvent("synthetic", "")
	mainP := &Elem{Kind: ElemProc, Name: "main", Module: "prog", File: "m.c", Line: 1}
	workP := &Elem{Kind: ElemProc, Name: "work", Module: "prog", File: "w.c", Line: 10}
	loop := &Elem{Kind: ElemLoop, File: "w.c", Line: 12, Addr: 0x2000}
	inl := &Elem{Kind: ElemInline, Name: "helper", File: "h.h", Line: 3, CallFile: "w.c", CallLine: 13}
	stmt := func(file string, line int) *Elem { return &Elem{Kind: ElemStmt, File: file, Line: line} }
	mod := indexedModule("prog",
		indexEntry{0x1000, 0x1010, []*Elem{mainP, stmt("m.c", 5)}},
		indexEntry{0x2000, 0x2010, []*Elem{workP, loop, inl, stmt("h.h", 4)}},
		indexEntry{0x2010, 0x2020, []*Elem{workP, loop, stmt("w.c", 11)}},
		indexEntry{0x2020, 0x2030, []*Elem{workP, stmt("w.c", 14)}})
	at := func(addrs ...uint64) []Frame {
		var fs []Frame
		for _, a := range addrs {
			fs = append(fs, Frame{Mod: mod, Addr: a})
		}
		return fs
	}
	for _, s := range []struct {
		n      int
		tid    uint32
		frames []Frame
		out    Outcome
	}{
		{6, 1, at(0x2004, 0x1004), Complete},
		{2, 1, at(0x2014, 0x1004), Complete},
		{1, 2, at(0x2024, 0x1004), Complete},
		{1, 1, at(0x2018), Failed},
	} {
		for range s.n {
			p.insert(Path{Tid: s.tid, Frames: s.frames, Out: s.out, Value: 1})
		}
	}
	return p
}

// roundTrip writes p's pprof profile and parses it back with pprof's
// own reader.
func roundTrip(t *testing.T, p *Profile) *profile.Profile {
	t.Helper()
	var buf bytes.Buffer
	if err := p.WritePprof(&buf); err != nil {
		t.Fatal(err)
	}
	pp, err := profile.Parse(&buf)
	if err != nil {
		t.Fatalf("pprof cannot read what bloop wrote: %v", err)
	}
	if err := pp.CheckValid(); err != nil {
		t.Fatalf("parsed profile invalid: %v", err)
	}
	return pp
}

// lineKey is a line of a function.
type lineKey struct {
	fn   string
	line int64
}

// leafLines sums each sample's count on its own line: the innermost Line
// of its leaf location that is a function, not a loop pseudo-frame.
func leafLines(pp *profile.Profile) map[lineKey]int64 {
	out := map[lineKey]int64{}
	for _, s := range pp.Sample {
		for _, ln := range s.Location[0].Line {
			if !isLoopFrame(ln.Function.Name) {
				// Line 0 is code without a line (a PLT stub, a line-0
				// row), on both sides left out: the flat line view lists
				// statements only.
				if ln.Line != 0 {
					out[lineKey{ln.Function.Name, ln.Line}] += s.Value[0]
				}
				break
			}
		}
	}
	return out
}

func isLoopFrame(name string) bool { return len(name) > 8 && name[:8] == "loop at " }

// flatLines is the flat line view's excl per function and line.
func flatLines(p *Profile) map[lineKey]int64 {
	out := map[lineKey]int64{}
	for _, fe := range p.Flat(true) {
		if fe.Elem.Kind == ElemStmt && fe.Excl > 0 && fe.Elem.Line != 0 {
			out[lineKey{fe.Proc, int64(fe.Elem.Line)}] += int64(fe.Excl)
		}
	}
	return out
}

// checkPprof checks a parsed profile against the report it came from:
// the same samples and time, the report's procedures, inlined functions
// and loops among its functions, and the flat line view's per-line
// totals on each sample's own line.
func checkPprof(t *testing.T, p *Profile, pp *profile.Profile, names ...string) {
	t.Helper()
	var count, cpu int64
	for _, s := range pp.Sample {
		count += s.Value[0]
		cpu += s.Value[1]
		if s.Value[1] != s.Value[0]*pp.Period {
			t.Errorf("sample of %d has %d ns at a period of %d", s.Value[0], s.Value[1], pp.Period)
		}
	}
	if count != int64(p.Samples) || pp.Period <= 0 || cpu != count*pp.Period {
		t.Errorf("pprof has %d samples, %d ns (period %d); the report has %d samples", count, cpu, pp.Period, p.Samples)
	}
	var have []string
	for _, f := range pp.Function {
		have = append(have, f.Name)
	}
	for _, n := range names {
		if !slices.Contains(have, n) {
			t.Errorf("pprof has no function %q: %q", n, have)
		}
	}
	got, want := leafLines(pp), flatLines(p)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("samples per function line: pprof %v, flat line view %v", got, want)
	}
}

func TestPprofRoundTrip(t *testing.T) {
	p := pprofSynthetic()
	pp := roundTrip(t, p)
	checkPprof(t, p, pp, "main", "work", "helper", "loop at w.c:12", partial.Name)
	if len(pp.Sample) != 4 || len(pp.Mapping) != 1 || pp.Mapping[0].File != "/bin/prog" {
		t.Errorf("%d samples, mappings %v; want 4 distinct stacks in one mapping of /bin/prog", len(pp.Sample), pp.Mapping)
	}
	for _, s := range pp.Sample {
		if tid := s.NumLabel["thread"]; len(tid) != 1 || tid[0] < 1 || tid[0] > 2 {
			t.Errorf("sample without its thread: %v", s.NumLabel)
		}
	}
	// The leaf frame of the helper samples: helper at its own line, then
	// the loop and work at the call site, not at the loop's header (12).
	want := []lineKey{{"helper", 4}, {"loop at w.c:12", 13}, {"work", 13}}
	var got []lineKey
	for _, ln := range pp.Sample[0].Location[0].Line {
		got = append(got, lineKey{ln.Function.Name, ln.Line})
	}
	if !slices.Equal(got, want) {
		t.Errorf("leaf frame lines %v, want %v", got, want)
	}
	if fn := pp.Sample[0].Location[0].Line[1].Function; fn.Filename != "w.c" || fn.StartLine != 12 {
		t.Errorf("loop frame's function is %s:%d, want its header w.c:12", fn.Filename, fn.StartLine)
	}
}
