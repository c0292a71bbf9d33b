package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"bloop/internal/testenv"
	"bloop/sample"
)

// TestRecordReport runs both commands end to end, and checks bad input
// gives a non-zero exit with no output file left behind.
func TestRecordReport(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "r.rec")
	notRec := filepath.Join(dir, "not.rec")
	os.WriteFile(notRec, []byte("BLOOPREC\x07\x00\x00\x00"), 0o644)
	for _, args := range [][]string{{}, {"a", "b"}, {"-view", "sideways", notRec}, {notRec}, {filepath.Join(dir, "missing")}} {
		if code := runReport(args); code == 0 {
			t.Errorf("report %q: exit 0", args)
		}
	}
	if code := runRecord([]string{"-o", rec}); code != 1 {
		t.Errorf("record without a program: exit %d, want 1", code)
	}
	if code := runRecord([]string{"-o", rec, "--", filepath.Join(dir, "missing")}); code != 1 {
		t.Errorf("record of a missing program: exit %d, want 1", code)
	}
	if _, err := os.Stat(rec); err == nil {
		t.Error("a failed record left its output behind")
	}
	testenv.Capable(t, "perf_event_open", sample.Available())
	bin, _ := filepath.Abs("../../testdata/bin/hot-gcc12-O2")
	if code := runRecord([]string{"-F", "500", "-o", rec, "--", bin, "20000000"}); code != 0 {
		t.Fatalf("record: exit %d", code)
	}
	pb := filepath.Join(dir, "p.pb.gz")
	for _, view := range []string{"top-down", "bottom-up", "flat"} {
		if code := runReport([]string{"-no-struct", "-view", view, "-pprof", pb, rec}); code != 0 {
			t.Errorf("report -view %s: exit %d", view, code)
		}
	}
}

// TestRecordCapsFrequency asks for more samples per second than the
// kernel allows: record warns, naming both rates, and samples at the
// limit, which the recording's metadata shows.
func TestRecordCapsFrequency(t *testing.T) {
	testenv.Capable(t, "perf_event_open", sample.Available())
	limit, err := sample.MaxSampleRate()
	testenv.Capable(t, "perf_event_max_sample_rate", err)
	dir := t.TempDir()
	rec := filepath.Join(dir, "r.rec")
	want := limit + 1000
	var code int
	stderr := captureStderr(t, func() {
		code = runRecord([]string{"-F", strconv.Itoa(want), "-stack", "8", "-o", rec, "--", "/bin/true"})
	})
	if code != 0 {
		t.Fatalf("record: exit %d; stderr:\n%s", code, stderr)
	}
	warning := fmt.Sprintf("-F %d exceeds kernel.perf_event_max_sample_rate %d", want, limit)
	if !strings.Contains(stderr, warning) {
		t.Errorf("stderr lacks %q:\n%s", warning, stderr)
	}
	r, err := sample.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if r.Meta.Freq != uint32(limit) {
		t.Errorf("recorded at %d Hz, want the limit %d", r.Meta.Freq, limit)
	}
}

// captureStderr runs f with os.Stderr sent to a file and returns what f
// wrote there.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	tmp, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.Close()
	saved := os.Stderr
	os.Stderr = tmp
	defer func() { os.Stderr = saved }()
	f()
	b, err := os.ReadFile(tmp.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRecordPassesStatusOn: record exits with the program's status (128 +
// signal when killed) and says how it ended, and so does report.
func TestRecordPassesStatusOn(t *testing.T) {
	testenv.Capable(t, "perf_event_open", sample.Available())
	dir := t.TempDir()
	for _, tc := range []struct {
		script string
		code   int
		fate   string
	}{
		{"exit 3", 3, "exit status 3"},
		{"kill -SEGV $$", 139, "killed by SIGSEGV"},
		{"exit 0", 0, "exit status 0"},
	} {
		rec := filepath.Join(dir, "r.rec")
		code, _, errOut := captured(t, runRecord, "-o", rec, "--", "/bin/sh", "-c", tc.script)
		if code != tc.code || !strings.Contains(errOut, tc.fate) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", tc.script, code, errOut, tc.code, tc.fate)
		}
		code, out, _ := captured(t, runReport, "-no-struct", rec)
		if code != 0 || !strings.Contains(out, tc.fate) {
			t.Errorf("%s: report exit %d, no %q in %q", tc.script, code, tc.fate, out)
		}
	}
}
