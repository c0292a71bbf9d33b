package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/sample"
)

// captured runs f with os.Stdout and os.Stderr sent to files and returns
// what it wrote to each.
func captured(t *testing.T, f func()) (stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	outF, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errF, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = outF, errF
	defer func() { os.Stdout, os.Stderr = oldOut, oldErr }()
	f()
	read := func(fl *os.File) string {
		fl.Seek(0, io.SeekStart)
		b, _ := io.ReadAll(fl)
		fl.Close()
		return string(b)
	}
	return read(outF), read(errF)
}

// TestReportDefaultRecording checks that report without a file reads the
// file record writes without -o, and that a missing one gives one line
// naming it and how to make it.
func TestReportDefaultRecording(t *testing.T) {
	_, usage := captured(t, func() { runRecord([]string{"-h"}) })
	if want := `(default "` + defaultRecording + `")`; !strings.Contains(usage, want) {
		t.Fatalf("record's -o default is not %s:\n%s", defaultRecording, usage)
	}
	bin, err := filepath.Abs("../../testdata/bin/hot-gcc12-O2")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	var code int
	_, msg := captured(t, func() { code = runReport(nil) })
	if code != 1 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, defaultRecording) || !strings.Contains(msg, "bloop record") {
		t.Errorf("report without a recording: exit %d, message %q; want exit 1 and one line naming %s and bloop record", code, msg, defaultRecording)
	}
	if err := sample.Available(); err != nil {
		t.Skipf("perf_event_open unavailable: %v", err)
	}
	captured(t, func() { code = runRecord([]string{"--", bin, "20000000"}) })
	if code != 0 {
		t.Fatalf("record: exit %d", code)
	}
	out, msg := captured(t, func() { code = runReport([]string{"-no-struct"}) })
	if code != 0 || !strings.Contains(out, "command:  "+bin) {
		t.Errorf("report of the default recording: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, msg)
	}
}
