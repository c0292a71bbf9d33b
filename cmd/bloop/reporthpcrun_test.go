package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/rectest"
	"bloop/meas"
)

// TestReportHpcrun: bloop report --hpcrun DIR writes a recording as a
// measurement directory, bloop struct DIR writes its structs/ (the
// sampled program's structure, named by the path the load map gives),
// and bloop report DIR finds in it the loop of the inlined hot_loop the
// recording's own report shows. A second write over DIR is refused.
func TestReportHpcrun(t *testing.T) {
	bin, err := filepath.Abs("../../testdata/bin/hot-gcc12-O2")
	if err != nil {
		t.Fatal(err)
	}
	rec := rectest.Record(t, bin)
	dir := filepath.Join(t.TempDir(), "m")
	code, direct, errs := captured(t, runReport, "--nocache", "--min", "0", "--lines", "--hpcrun", dir, rec)
	if code != 0 {
		t.Fatalf("report --hpcrun: exit %d, stderr %q", code, errs)
	}
	if code := runStruct([]string{"-q", "--nocache", dir}); code != 0 {
		t.Fatalf("struct %s: exit %d", dir, code)
	}
	st, err := os.ReadFile(filepath.Join(meas.StructsDir(dir), "hot-gcc12-O2.hpcstruct"))
	if err != nil || !strings.Contains(string(st), `n="`+bin+`"`) {
		t.Fatalf("structs/hot-gcc12-O2.hpcstruct (%v) does not name %s", err, bin)
	}
	code, out, errs := captured(t, runReport, "--nocache", "--min", "0", "--lines", dir)
	if code != 0 {
		t.Fatalf("report %s: exit %d, stderr %q", dir, code, errs)
	}
	for _, want := range []string{"hot_loop", "loop at hot.c:7"} {
		if !strings.Contains(direct, want) || !strings.Contains(out, want) {
			t.Errorf("%q: in the recording's report %v, in the measurement's %v:\n%s", want, strings.Contains(direct, want), strings.Contains(out, want), out)
		}
	}
	// The view itself, line for line: the tree of the recording's
	// analysis, and of the measurement with the structure files bloop
	// struct wrote.
	if a, b := viewOf(direct), viewOf(out); a == "" || a != b {
		t.Errorf("the views differ:\nrecording:\n%s\nmeasurement directory:\n%s", a, b)
	}
	if code, _, errs := captured(t, runReport, "--nocache", "--hpcrun", dir, rec); code == 0 || strings.Count(errs, "\n") != 1 {
		t.Errorf("report --hpcrun over a measurement directory: exit %d, stderr %q", code, errs)
	}
}

// viewOf is a report's view: from its column header on.
func viewOf(report string) string {
	if i := strings.Index(report, "incl%"); i >= 0 {
		return report[i:]
	}
	return ""
}
