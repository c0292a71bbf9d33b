package profile

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
)

// pprofBuilder makes the pprof profile from the tree of stacks.
// Each frame becomes a Location whose Lines are its scopes innermost first:
// inlined calls as pprof's inline frames, and loops as frames of their own
// (functions named "loop at file:line") so that flame graphs show them.
// Every Line carries the sample's own line in that scope (for a caller, the
// call site), never a loop's header: per-line views (pprof -list) then put
// each sample on its line, not all of a loop's samples on its first line.
type pprofBuilder struct {
	funcs map[funcKey]*profile.Function
	locs  map[locKey]*profile.Location
	maps  map[*Module]*profile.Mapping

	funcList []*profile.Function
	locList  []*profile.Location
	mapList  []*profile.Mapping
}

type funcKey struct {
	name, file string
}

type locKey struct {
	mod  *Module
	addr uint64
}

// pprofSample is one distinct stack of one thread, its sample count and
// its values per event.
type pprofSample struct {
	locs   []*profile.Location
	tid    uint32
	count  int64
	values []int64
}

func newPprofBuilder() *pprofBuilder {
	return &pprofBuilder{funcs: map[funcKey]*profile.Function{}, locs: map[locKey]*profile.Location{},
		maps: map[*Module]*profile.Mapping{}}
}

// function returns the one Function of a name and file.
func (b *pprofBuilder) function(name, file string, line int) *profile.Function {
	k := funcKey{name, file}
	if f, ok := b.funcs[k]; ok {
		return f
	}
	f := &profile.Function{ID: uint64(len(b.funcList) + 1), Name: name, SystemName: name, Filename: file, StartLine: int64(line)}
	b.funcs[k] = f
	b.funcList = append(b.funcList, f)
	return f
}

// mapping returns the Mapping of a module. Addresses are file addresses,
// so each mapping spans the whole address range.
func (b *pprofBuilder) mapping(m *Module) *profile.Mapping {
	if pm, ok := b.maps[m]; ok {
		return pm
	}
	pm := &profile.Mapping{ID: uint64(len(b.mapList) + 1), Limit: 1 << 63, File: m.Path,
		HasFunctions: true, HasFilenames: true, HasLineNumbers: true, HasInlineFrames: true}
	b.maps[m] = pm
	b.mapList = append(b.mapList, pm)
	return pm
}

// location returns the Location of a frame, its Lines made from the
// frame's scope path (outermost first, as scopesOf gives it).
func (b *pprofBuilder) location(f Frame, scopes func(Frame) []*Elem) *profile.Location {
	k := locKey{f.Mod, f.Addr}
	if l, ok := b.locs[k]; ok {
		return l
	}
	l := &profile.Location{ID: uint64(len(b.locList) + 1), Mapping: b.mapping(f.Mod), Address: f.Addr,
		Line: b.lines(scopes(f))}
	b.locs[k] = l
	b.locList = append(b.locList, l)
	return l
}

// lines turns a scope path into pprof Lines, innermost first. The line
// of each scope is the sample's line in it: the statement's line, and
// above an inlined call its call site; a loop passes the line through.
func (b *pprofBuilder) lines(path []*Elem) []profile.Line {
	line := 0
	if n := len(path); n > 0 && path[n-1].Kind == ElemStmt {
		line = path[n-1].Line
		path = path[:n-1]
	}
	out := make([]profile.Line, 0, len(path))
	for i := len(path) - 1; i >= 0; i-- {
		e := path[i]
		name := e.Name
		if e.Kind == ElemLoop {
			name = e.Label()
		}
		out = append(out, profile.Line{Function: b.function(name, e.File, e.Line), Line: int64(line)})
		if e.Kind == ElemInline {
			line = e.CallLine
		}
	}
	return out
}

// partialLocation is the root frame of samples whose unwind stopped early.
func (b *pprofBuilder) partialLocation() *profile.Location {
	k := locKey{}
	if l, ok := b.locs[k]; ok {
		return l
	}
	l := &profile.Location{ID: uint64(len(b.locList) + 1), Line: []profile.Line{{Function: b.function(partial.Name, "", 0)}}}
	b.locs[k] = l
	b.locList = append(b.locList, l)
	return l
}

// samples makes the stacks' samples, their Locations (and Functions and
// Mappings) numbered in the order of the stacks' first samples, as they
// would be had each sample been added as it came; the samples with the
// most samples first.
func (b *pprofBuilder) samples(st *stacks, scopes func(Frame) []*Elem) []*pprofSample {
	var out []*pprofSample
	for s := range st.list {
		frames, partial := st.frames(s)
		locs := make([]*profile.Location, 0, len(frames)+1)
		for _, f := range frames {
			locs = append(locs, b.location(f, scopes))
		}
		if partial {
			locs = append(locs, b.partialLocation())
		}
		out = append(out, &pprofSample{locs: locs, tid: s.tid, count: s.count, values: s.values()})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].count > out[j].count })
	return out
}

// Pprof returns the profile in pprof's form: sample counts and CPU time
// per stack and thread.
func (p *Profile) Pprof() *profile.Profile {
	if p.Meta.Perf || p.Meas != nil {
		return p.perfPprof()
	}
	b := newPprofBuilder()
	order := b.samples(&p.stacks, p.scopesOf)
	period := int64(1_000_000)
	if p.Meta.Freq > 0 {
		period = int64(1e9 / float64(p.Meta.Freq))
	}
	out := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType:    &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:        period,
		TimeNanos:     int64(p.Meta.StartNanos),
		DurationNanos: int64(p.Stats.DurationNanos),
		Comments:      []string{"bloop report of " + strings.Join(p.Meta.Command, " ")},
		Mapping:       b.mapList,
		Location:      b.locList,
		Function:      b.funcList,
	}
	for _, s := range order {
		out.Sample = append(out.Sample, &profile.Sample{Location: s.locs, Value: []int64{s.count, s.count * period},
			NumLabel: map[string][]int64{"thread": {int64(s.tid)}}})
	}
	return out
}

// WritePprof writes the profile as gzip-compressed profile.proto, after
// pprof's own validity check.
func (p *Profile) WritePprof(w io.Writer) error {
	pp := p.Pprof()
	if err := pp.CheckValid(); err != nil {
		return fmt.Errorf("pprof profile: %w", err)
	}
	return pp.Write(w)
}

// perfPprof is the pprof profile of a perf.data file or a measurement
// directory: a sample type per event, its unit nanoseconds for time (the
// clocks, hpcrun's time metrics) and count otherwise, after the sample
// count; the default type is the event the views show.
func (p *Profile) perfPprof() *profile.Profile {
	b := newPprofBuilder()
	order := b.samples(&p.stacks, p.scopesOf)
	names := p.Meta.EventNames()
	// A measurement directory's values are metrics at call paths, not
	// samples: no count.
	counted := p.Meas == nil
	var types []*profile.ValueType
	comment := "bloop report of perf record " + strings.Join(p.Meta.Command, " ")
	if counted {
		types = append(types, &profile.ValueType{Type: "samples", Unit: "count"})
	} else {
		comment = "bloop report of hpcrun measurements of " + strings.Join(p.Meta.Command, " ")
	}
	for i, n := range names {
		types = append(types, &profile.ValueType{Type: n, Unit: p.EventUnit(i)})
	}
	out := &profile.Profile{
		SampleType: types,
		Comments:   []string{comment},
		Mapping:    b.mapList,
		Location:   b.locList,
		Function:   b.funcList,
	}
	if p.Event < len(names) {
		out.DefaultSampleType = names[p.Event]
	}
	// Time is in nanoseconds, pprof's unit that -top prints as s and ms.
	nanos := make([]float64, len(names))
	for i := range names {
		nanos[i] = p.EventNanos(i)
	}
	for _, s := range order {
		v := make([]int64, len(types))
		vals := v
		if counted {
			v[0] = s.count
			vals = v[1:]
		}
		for i := range vals {
			vals[i] = at64(s.values, i)
			if ns := nanos[i]; ns > 0 && ns != 1 {
				vals[i] = int64(math.Round(float64(vals[i]) * ns))
			}
		}
		out.Sample = append(out.Sample, &profile.Sample{Location: s.locs, Value: v,
			NumLabel: map[string][]int64{"thread": {int64(s.tid)}}})
	}
	return out
}

// EventUnit is the unit of event i's values in pprof: nanoseconds for
// an event that measures time (perfPprof converts its values), nano-units
// for an hpcrun metric of real values that does not, else count.
func (p *Profile) EventUnit(i int) string {
	if p.EventNanos(i) > 0 {
		return "nanoseconds"
	}
	if i < len(p.EventScale) && p.EventScale[i] != 1 {
		return "nano-units"
	}
	return "count"
}

func at64(v []int64, i int) int64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}
