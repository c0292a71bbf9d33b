package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/rectest"
	"bloop/internal/testenv"
	"bloop/sample"
)

// TestReportDefaultRecording checks that report without a file reads the
// file record writes without -o, and that a missing one gives one line
// naming it and how to make it.
func TestReportDefaultRecording(t *testing.T) {
	_, usage, _ := captured(t, runRecord, "-h")
	if want := `(default "` + defaultRecording + `")`; !strings.Contains(usage, want) {
		t.Fatalf("record's -o default is not %s:\n%s", defaultRecording, usage)
	}
	bin, err := filepath.Abs("../../testdata/bin/hot-gcc12-O2")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	var code int
	code, _, msg := captured(t, runReport)
	if code != 1 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, defaultRecording) || !strings.Contains(msg, "bloop record") {
		t.Errorf("report without a recording: exit %d, message %q; want exit 1 and one line naming %s and bloop record", code, msg, defaultRecording)
	}
	testenv.Capable(t, "perf_event_open", sample.Available())
	code, _, _ = captured(t, runRecord, "--", bin, "20000000")
	if code != 0 {
		t.Fatalf("record: exit %d", code)
	}
	code, out, msg := captured(t, runReport, "-no-struct")
	if code != 0 || !strings.Contains(out, "command:  "+bin) {
		t.Errorf("report of the default recording: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, msg)
	}
}

// TestReportStructOfOtherBuild: report --struct accepts the structure
// file of the recorded binary and refuses, in one line naming the file,
// the module and what differed, the file of another build.
func TestReportStructOfOtherBuild(t *testing.T) {
	bin, _ := filepath.Abs("../../testdata/bin/loops-gcc12-O2")
	rec := rectest.Fake(t, bin, 0x1552, 0x1560)
	cases := []struct {
		structure string
		code      int
		stderr    []string
		stdout    string
	}{
		{"../../testdata/golden/loops-gcc12-O2.hpcstruct", 0, nil, "loop at loops.c:21"},
		{"../../testdata/golden/loops-clang14-O2.hpcstruct", 1,
			[]string{"loops-clang14-O2.hpcstruct", bin, "procedures at their symbol's address"}, ""},
	}
	for _, c := range cases {
		var code int
		code, out, msg := captured(t, runReport, "-struct", c.structure, rec)
		if code != c.code || !strings.Contains(out, c.stdout) {
			t.Errorf("%s: exit %d, want %d; stdout lacks %q?\n%s\n%s", c.structure, code, c.code, c.stdout, out, msg)
		}
		for _, s := range c.stderr {
			if !strings.Contains(msg, s) || strings.Count(msg, "\n") != 1 {
				t.Errorf("%s: stderr lacks %q or is not one line: %q", c.structure, s, msg)
			}
		}
	}
}

// cacheFiles counts the entries in a cache directory.
func cacheFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, "-o") {
			n++
		}
		return nil
	})
	return n
}

// TestReportUsesCache: the first report stores each sampled module's
// analysis, the second reads it and prints the same report, which is the
// report without a cache.
func TestReportUsesCache(t *testing.T) {
	bin, _ := filepath.Abs("../../testdata/bin/inline-gcc12-O2")
	if _, err := os.Stat(bin); err != nil {
		t.Fatal("testdata binary missing")
	}
	rec := rectest.Fake(t, bin, 0x1140, 0x1180, 0x1200)
	dir := t.TempDir()
	code1, out1, _ := captured(t, runReport, "-c", dir, "--lines", rec)
	stored := cacheFiles(t, dir)
	code2, out2, _ := captured(t, runReport, "-c", dir, "--lines", rec)
	code3, out3, _ := captured(t, runReport, "--nocache", "--lines", rec)
	if code1 != 0 || code2 != 0 || code3 != 0 {
		t.Fatalf("exits %d %d %d", code1, code2, code3)
	}
	if stored == 0 {
		t.Fatal("the first report stored nothing")
	}
	if n := cacheFiles(t, dir); n != stored {
		t.Errorf("the second report stored %d more entries: it did not reuse them", n-stored)
	}
	if out1 != out2 || out2 != out3 {
		t.Errorf("reports differ with the cache:\n%s\n---\n%s\n---\n%s", out1, out2, out3)
	}
}

// TestReportDamagedRecording: a truncated or overwritten recording (a
// record killed mid-write, a disk error, another file) is refused in one
// line naming the file and what is wrong, with exit 1, and nothing on
// standard output.
func TestReportDamagedRecording(t *testing.T) {
	bin, _ := filepath.Abs("../../testdata/bin/loops-gcc12-O2")
	good, err := os.ReadFile(rectest.Fake(t, bin, 0x1100, 0x1104, 0x1108))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", good[:len(good)-7], "truncated record"},
		{"header only", good[:10], "bad header"},
		{"an ELF file", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00"), "not a bloop recording"},
		{"record length overwritten", append(append([]byte(nil), good...), 6, 0xff, 0xff, 0xff, 0x7f), "record of"},
		{"future version", append([]byte("BLOOPREC"), 9, 0, 0, 0), "version 9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.rec")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, msg := captured(t, runReport, "--no-struct", "--nocache", path)
			if code != 1 || out != "" || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, path) || !strings.Contains(msg, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one line naming %s and saying %q", code, out, msg, path, tc.want)
			}
		})
	}
}

// TestReportHTML: --html writes the page beside the text report, which
// stays what it is without it; the page embeds the sources -R finds; a
// bad -R is a usage error in one line.
func TestReportHTML(t *testing.T) {
	bin, _ := filepath.Abs("../../testdata/bin/loops-gcc12-O2")
	rec := rectest.Fake(t, bin, 0x1550, 0x1558, 0x1320)
	page := filepath.Join(t.TempDir(), "r.html")
	code, plain, _ := captured(t, runReport, "--nocache", rec)
	code2, out, msg := captured(t, runReport, "--nocache", "--html", page, "-R", "/src=../../testdata/src", rec)
	if code != 0 || code2 != 0 || out != plain {
		t.Fatalf("exits %d %d; stdout with --html differs: %q\nstderr: %s", code, code2, out, msg)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`<script type="application/json" id="bloop-data">`, `"found":"../../testdata/src/loops.c"`, "loop at loops.c:21"} {
		if !strings.Contains(string(b), s) {
			t.Errorf("the page lacks %q", s)
		}
	}
	code, _, msg = captured(t, runReport, "--html", page, "-R", "/src", rec)
	if code != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "/src") {
		t.Errorf("bad -R: exit %d, %q", code, msg)
	}
}
