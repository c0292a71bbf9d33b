package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestReportPerfData reports a committed perf.data file (recognised by
// its contents): both events in the summary, --event choosing the one
// the views show, an unknown event refused in one line naming the file's,
// and a pprof profile with a sample type per event.
func TestReportPerfData(t *testing.T) {
	data, _ := filepath.Abs("../../perfevent/testdata/fp.data")
	bin, _ := filepath.Abs("../../testdata/prof/bin")
	pb := filepath.Join(t.TempDir(), "p.pb.gz")
	code, out, msg := captured(t, runReport, "--nocache", "--no-struct", "--module-dir", bin, "--view", "flat", "--event", "page-faults", "--pprof", pb, data)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, msg)
	}
	for _, want := range []string{"event:    task-clock: 8 samples, 26.7ms\n", "event:    page-faults: 12 samples, 876 events (period sum)  (shown", "_IO_file_doallocate"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	f, err := os.Open(pb)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pp, err := profile.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, st := range pp.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if got := strings.Join(types, " "); got != "samples/count task-clock/nanoseconds page-faults/count" || pp.DefaultSampleType != "page-faults" {
		t.Errorf("pprof sample types %s, default %q", got, pp.DefaultSampleType)
	}
	code, _, msg = captured(t, runReport, "--nocache", "--no-struct", "--event", "cycles", data)
	if code != 1 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "task-clock, page-faults") {
		t.Errorf("unknown event: exit %d, %q", code, msg)
	}
}
