package profile

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"bloop/internal/testenv"
	"bloop/sample"
)

// TestEventNanos: which events are time, and in what unit the trees
// hold it: perf's clocks in nanoseconds, hpcrun's metrics by the unit
// their names end in (real values kept in nano-units), counts not.
func TestEventNanos(t *testing.T) {
	meas := &MeasInfo{}
	for _, c := range []struct {
		name  string
		p     Profile
		nanos []float64
		units []string
	}{
		{"perf.data", Profile{Meta: sample.Meta{Perf: true, Events: []string{"cpu-clock", "task-clock", "cycles", "page-faults"}}},
			[]float64{1, 1, 0, 0}, []string{"nanoseconds", "nanoseconds", "count", "count"}},
		{"perf.data, modifiers", Profile{Meta: sample.Meta{Perf: true, Events: []string{"cpu-clock:ppp", "task-clock:u", "cycles:u", "sched:sched_switch"}}},
			[]float64{1, 1, 0, 0}, []string{"nanoseconds", "nanoseconds", "count", "count"}},
		{"perf.data, attributes", Profile{Meta: sample.Meta{Perf: true, Events: []string{"cpu-clock/period=1000/", "my-clock", "cpu-clock"}, Clocks: []bool{true, false, false}}},
			[]float64{1, 0, 0}, []string{"nanoseconds", "count", "count"}},
		{"bloop recording: samples", Profile{Meta: sample.Meta{Event: "cpu-clock"}}, []float64{0}, []string{"count"}},
		{"hpcrun", Profile{Meas: meas, Meta: sample.Meta{Events: []string{"REALTIME (sec)", "CPUTIME (usec)", "PAPI_TOT_CYC", "GPU (ratio)"}},
			EventScale: []float64{1e-9, 1, 1, 1e-9}},
			[]float64{1, 1000, 0, 0}, []string{"nanoseconds", "nanoseconds", "count", "nano-units"}},
	} {
		for i := range c.nanos {
			if got := c.p.EventNanos(i); math.Abs(got-c.nanos[i]) > 1e-9*c.nanos[i] {
				t.Errorf("%s: event %d: %g ns per unit, want %g", c.name, i, got, c.nanos[i])
			}
			if got := c.p.EventUnit(i); got != c.units[i] {
				t.Errorf("%s: event %d: unit %q, want %q", c.name, i, got, c.units[i])
			}
		}
	}
}

// TestBaseEventName: perf's modifiers go, a tracepoint's system stays.
func TestBaseEventName(t *testing.T) {
	for _, c := range [][2]string{
		{"cpu-clock:ppp", "cpu-clock"}, {"cycles:u", "cycles"}, {"task-clock:uH", "task-clock"},
		{"cpu-clock", "cpu-clock"}, {"sched:sched_switch", "sched:sched_switch"}, {"raw 0x1c2", "raw 0x1c2"},
		{"cycles:", "cycles:"}, {"irq:irq_handler_entry", "irq:irq_handler_entry"},
	} {
		if got := BaseEventName(c[0]); got != c[1] {
			t.Errorf("BaseEventName(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

// TestSelectEventBaseName: --event cpu-clock picks "cpu-clock:ppp"; a
// base name two events share is refused.
func TestSelectEventBaseName(t *testing.T) {
	p := &Profile{Meta: sample.Meta{Perf: true, Events: []string{"cycles:u", "cpu-clock:ppp", "cycles:k"}}}
	if err := p.selectEvent("f", "cpu-clock"); err != nil || p.Event != 1 {
		t.Errorf("cpu-clock: event %d, %v; want 1", p.Event, err)
	}
	if err := p.selectEvent("f", "cycles:k"); err != nil || p.Event != 2 {
		t.Errorf("cycles:k: event %d, %v; want 2", p.Event, err)
	}
	if err := p.selectEvent("f", "cycles"); err == nil {
		t.Errorf("cycles: chose event %d of two", p.Event)
	}
}

// TestPprofTopTime runs go tool pprof -top on the pprof output of a
// perf.data file (task-clock) and of hpcrun's measurement directory
// (REALTIME (sec)): pprof prints the total as time, and it is the
// profile's.
func TestPprofTopTime(t *testing.T) {
	testenv.Need(t, "go")
	bin, _ := filepath.Abs("../testdata/prof/bin")
	meas := filepath.Join(hpcrunMeas, "measurements")
	if _, err := os.Stat(meas); err != nil {
		testenv.Absent(t, "../shared/hpcrun-meas missing")
	}
	for _, c := range []struct {
		path string
		opt  Options
	}{
		{"../perfevent/testdata/fp.data", Options{Event: "task-clock", ModuleDirs: []string{bin}, Analyze: func(string) bool { return false }}},
		{meas, Options{ModuleDirs: []string{hpcrunMeas}, Analyze: func(string) bool { return false }}},
	} {
		p, err := Build(c.path, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		pb := filepath.Join(t.TempDir(), "p.pb.gz")
		f, err := os.Create(pb)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.WritePprof(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		out, err := exec.Command("go", "tool", "pprof", "-top", pb).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof: %v\n%s", err, out)
		}
		m := regexp.MustCompile(`of ([0-9.]+)(s|ms|us|µs) total`).FindSubmatch(out)
		if m == nil {
			t.Errorf("%s: pprof -top gives no total in s or ms:\n%s", c.path, out)
			continue
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		ns := v * map[string]float64{"s": 1e9, "ms": 1e6, "us": 1e3, "µs": 1e3}[string(m[2])]
		total := float64(p.Total) * p.EventNanos(p.Event)
		if math.Abs(ns-total) > 0.01*total {
			t.Errorf("%s: pprof's total %s%s, the profile's %g ns", c.path, m[1], m[2], total)
		}
		t.Logf("%s: pprof -top: total %s%s", c.path, m[1], m[2])
	}
}
