package profile

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/rectest"
	"bloop/internal/testenv"
	"bloop/sample"
)

// perfRecord runs perf record (Debian's linux-perf) on argv with the
// call-graph options given, into a temporary file; the test is skipped
// without perf or permission to use perf_event_open.
func perfRecord(t *testing.T, mode []string, argv ...string) string {
	t.Helper()
	return perfRecordEvents(t, "cpu-clock,page-faults", mode, argv...)
}

// perfRecordEvents is perfRecord of the events named as perf's -e takes
// them.
func perfRecordEvents(t *testing.T, events string, mode []string, argv ...string) string {
	t.Helper()
	testenv.Need(t, "perf")
	testenv.Capable(t, "perf_event_open", sample.Available())
	out := filepath.Join(t.TempDir(), "perf.data")
	args := append([]string{"record", "-q", "-o", out, "-e", events, "-F", "999"}, mode...)
	args = append(append(args, "--"), argv...)
	if b, err := exec.Command("perf", args...).CombinedOutput(); err != nil {
		testenv.Capable(t, fmt.Sprintf("perf record %v (%s)", mode, b), err)
	}
	return out
}

// perfOutput runs a perf command and returns its standard output.
func perfOutput(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("perf", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("perf %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String()
}

// perfCompletePaths counts the samples whose callchain in perf script's
// output ends in _start or a clone: perf's own complete unwinds.
func perfCompletePaths(script string) int {
	n := 0
	last := ""
	sc := bufio.NewScanner(strings.NewReader(script))
	sc.Buffer(nil, 1<<20)
	end := func() {
		if last == "_start" || strings.HasPrefix(strings.TrimLeft(last, "_"), "clone") {
			n++
		}
		last = ""
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			end()
		case strings.HasPrefix(line, "\t"):
			f := strings.Fields(line)
			if len(f) >= 2 {
				last, _, _ = strings.Cut(f[1], "+")
			}
		}
	}
	end()
	return n
}

// TestPerfDataLive records testdata/prof's unwind program with perf in
// each call-graph mode and requires bloop report's flat per-procedure
// self shares of cpu-clock to be perf report's within 0.5 points; with
// --call-graph dwarf, at least as many samples unwound to the process or
// thread entry as perf's own unwinding of the same file.
func TestPerfDataLive(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/prof/bin/unwind-gcc12-O2")
	for _, mode := range []struct {
		name string
		args []string
	}{{"plain", nil}, {"fp", []string{"-g"}}, {"dwarf", []string{"--call-graph", "dwarf"}}} {
		t.Run(mode.name, func(t *testing.T) {
			file := perfRecord(t, mode.args, bin, "400", "2", "100")
			rows := parsePerfReport(t, perfOutput(t, "report", "--no-children", "--sort", "dso,sym", "--stdio", "-g", "none", "-i", file))
			p, err := Build(file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			worst := compareWithPerf(t, p, rows["cpu-clock"])
			t.Logf("%d cpu-clock samples, largest deviation from perf report %.2f points; warnings %q", p.EventSamples[0], worst, p.Warnings)
			if p.EventSamples[0] < 100 {
				t.Errorf("only %d cpu-clock samples", p.EventSamples[0])
			}
			if mode.name != "dwarf" {
				return
			}
			theirs := perfCompletePaths(perfOutput(t, "script", "-F", "ip,sym", "-i", file))
			ours := p.Outcomes[Complete]
			t.Logf("complete call paths: bloop %d, perf %d, of %d samples", ours, theirs, p.Samples)
			if ours < uint64(theirs) {
				t.Errorf("bloop unwound %d samples to an entry, perf %d", ours, theirs)
			}
		})
	}
}

// TestPerfDataClockModifiers: a clock event named with perf's modifiers
// (as perf names its default event where there is no PMU,
// "cpu-clock:ppp") is still time: its totals are nanoseconds, about the
// program's CPU time, and --event takes its base name.
func TestPerfDataClockModifiers(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/prof/bin/unwind-gcc12-O2")
	file := perfRecordEvents(t, "cpu-clock:u,page-faults:u", nil, bin, "400", "2", "100")
	p, err := Build(file, Options{Event: "cpu-clock", Analyze: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Meta.EventNames(); len(got) != 2 || got[0] != "cpu-clock:u" {
		t.Fatalf("events %q, want cpu-clock:u first", got)
	}
	if p.EventNanos(0) != 1 || p.EventUnit(0) != "nanoseconds" || p.EventNanos(1) != 0 {
		t.Errorf("cpu-clock:u %g ns (%s), page-faults:u %g ns; want 1 and 0", p.EventNanos(0), p.EventUnit(0), p.EventNanos(1))
	}
	// -F 999: a sample's period is about a millisecond of CPU time.
	perSample := float64(p.EventTotals[0]) / float64(p.EventSamples[0])
	if p.EventSamples[0] < 100 || perSample < 1e5 || perSample > 1e8 {
		t.Errorf("%d samples, %.0f ns each: not cpu-clock's nanoseconds", p.EventSamples[0], perSample)
	}
}

// TestPerfDataLoopLines records hot-gcc12-O2 with perf --call-graph
// dwarf and with bloop record, and requires the share of cpu-clock under
// the loop of the inlined hot_loop in the perf file to be at least 95% of
// the share in bloop's own recording.
func TestPerfDataLoopLines(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/bin/hot-gcc12-O2")
	file := perfRecord(t, []string{"--call-graph", "dwarf"}, bin)
	only := Options{Analyze: onlyModule(bin)}
	p, err := Build(file, only)
	if err != nil {
		t.Fatal(err)
	}
	own, err := Build(rectest.Record(t, bin), only)
	if err != nil {
		t.Fatal(err)
	}
	theirs, ours := hotLoopShare(p), hotLoopShare(own)
	t.Logf("under hot_loop's loop: %.1f%% of perf's cpu-clock, %.1f%% of bloop's own samples", 100*theirs, 100*ours)
	if theirs < 0.95*ours {
		t.Errorf("perf.data: %.1f%% under hot_loop's loop, bloop's recording %.1f%%", 100*theirs, 100*ours)
	}
}

// hotLoopShare is the share of the profile's event under the loop of the
// inlined hot_loop.
func hotLoopShare(p *Profile) float64 {
	var under uint64
	var walk func(n *Node, inHot bool)
	walk = func(n *Node, inHot bool) {
		if n.Elem != nil && n.Elem.Kind == ElemLoop && inHot {
			under += n.Incl
			return
		}
		if n.Elem != nil && n.Elem.Kind == ElemInline && n.Elem.Name == "hot_loop" {
			inHot = true
		}
		for _, c := range n.Children {
			walk(c, inHot)
		}
	}
	walk(p.Root, false)
	return float64(under) / float64(max(p.Total, 1))
}
