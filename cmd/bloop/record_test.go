package main

import (
	"os"
	"path/filepath"
	"testing"

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
	if err := sample.Available(); err != nil {
		t.Skipf("perf_event_open unavailable: %v", err)
	}
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
