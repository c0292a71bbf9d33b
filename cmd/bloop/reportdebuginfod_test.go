package main

import (
	"archive/tar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"bloop/internal/debuginfodtest"
	"bloop/internal/testenv"
	"bloop/sample"
	"bloop/schema"
)

// writeTar writes an archive of files (name in the archive: file here).
func writeTar(t *testing.T, path string, files map[string]string) {
	t.Helper()
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := tar.NewWriter(out)
	for name, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// hotServer starts a real debuginfod serving an archive of
// hot-gcc12-O2 (unstripped) and its source at the line table's path,
// /src/hot.c, which is not on this machine. It returns the server, the
// program, its source here and its build-id.
func hotServer(t *testing.T) (srv *debuginfodtest.Server, bin, src, id string) {
	t.Helper()
	bin = testenv.Fixture(t, "../../testdata/bin/hot-gcc12-O2")
	src = testenv.Fixture(t, "../../testdata/src/hot.c")
	if _, err := os.Stat("/src/hot.c"); err == nil {
		t.Skip("/src/hot.c is on this machine: the page would not need the server's")
	}
	served := filepath.Join(t.TempDir(), "served")
	os.Mkdir(served, 0o755)
	id = debuginfodtest.BuildID(t, bin)
	writeTar(t, filepath.Join(served, "hot.tar"), map[string]string{"usr/bin/hot": bin, "src/hot.c": src})
	return debuginfodtest.StartTar(t, served, id), bin, src, id
}

// embeds says whether the page's data holds the text of the file src
// for the line table's path, and logs where it was found.
func embeds(t *testing.T, d map[string]any, path, src string) bool {
	t.Helper()
	want, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	strs := d["strings"].([]any)
	for _, f := range d["files"].([]any) {
		f := f.(map[string]any)
		if strs[int(f["path"].(float64))] == path {
			t.Logf("%s: found %v, note %v", path, f["found"], f["note"])
			return f["text"] == string(want)
		}
	}
	return false
}

// TestReportDebuginfod: a perf record --call-graph dwarf of a stripped
// program, reported with a real debuginfod serving its unstripped build
// (and its source, in an archive: the line table's /src/hot.c is not on
// this machine), is the report of the unstripped program in its place:
// the inlined hot_loop and its loop on source lines; the report page
// embeds the source the server sent; the module's analysis cached
// without the debug file is not reused. With the program gone from
// disk, its file comes from the server as the executable, to the same
// report.
func TestReportDebuginfod(t *testing.T) {
	testenv.Need(t, "perf")
	srv, bin, src, id, dir, prog := strippedHot(t)
	// perf record keeps the program in its build-id cache, which the
	// report would read before asking debuginfod (TestPerfCachedModule):
	// an empty one here.
	t.Setenv("PERF_BUILDID_DIR", t.TempDir())

	data := filepath.Join(dir, "perf.data")
	rec := exec.Command("perf", "record", "-q", "-o", data, "--call-graph", "dwarf", "-F", "999", "--", prog)
	rec.Dir = dir
	if out, err := rec.CombinedOutput(); err != nil {
		testenv.Capable(t, "perf record ("+string(out)+")", err)
	}
	// Through one structure cache: the analysis made without the debug
	// file must not be served once it is fetched.
	structCache := t.TempDir()
	report := flatReport(t, data, "-c", structCache)
	useServer(t, srv.URL)
	wants := []string{"[inlined] hot_loop", "loop at hot.c:"}
	plain, _ := report("--no-debuginfod")
	for _, w := range wants {
		if strings.Contains(plain, w) {
			t.Fatalf("the stripped program's report has %q without debuginfod:\n%s", w, plain)
		}
	}
	page := filepath.Join(dir, "page.html")
	got, stderr := report("--html", page)
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("no %q in the report with debuginfod:\n%s", w, got)
		}
	}
	if ws := warningLines(stderr); len(ws) > 0 {
		t.Errorf("warnings: %q", ws)
	}
	if !embeds(t, pageData(t, page, schema.ReportPage), "/src/hot.c", src) {
		t.Error("the page does not embed the source of /src/hot.c the server sent")
	}

	// The unstripped program in the stripped one's place: the same report.
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if unstripped, _ := report("--no-debuginfod"); got != unstripped {
		t.Errorf("with debuginfod:\n%s\nthe unstripped program:\n%s", got, unstripped)
	}

	// The program gone: the server's executable stands in.
	os.Remove(prog)
	cache := t.TempDir()
	t.Setenv("DEBUGINFOD_CACHE_PATH", cache)
	gone, stderr := report()
	if gone != got || len(warningLines(stderr)) > 0 {
		t.Errorf("program gone: same report: %v; stderr:\n%s", gone == got, stderr)
	}
	if _, err := os.Stat(filepath.Join(cache, id, "executable")); err != nil {
		t.Errorf("no executable in the client cache: %v", err)
	}
}

// TestPagesDebuginfodSources: the structure page of a program, and the
// diff page of its structure and its -O0 build's, embed the source the
// line table names (/src/hot.c, not on this machine) as a real
// debuginfod serves it by the program's build-id; --no-debuginfod
// leaves it not found.
func TestPagesDebuginfodSources(t *testing.T) {
	srv, bin, src, _ := hotServer(t)
	t.Setenv("DEBUGINFOD_CACHE_PATH", t.TempDir())
	t.Setenv("DEBUGINFOD_URLS", srv.URL)
	t.Setenv("DEBUGINFOD_TIMEOUT", "5")
	dir := t.TempDir()
	for _, off := range []bool{false, true} {
		var flags []string
		if off {
			flags = []string{"--no-debuginfod"}
		}
		page := filepath.Join(dir, "s.html")
		if code, _, stderr := captured(t, runStruct, append([]string{"-q", "--nocache", "--format", "html", "-o", page}, append(flags, bin)...)...); code != 0 {
			t.Fatalf("struct: exit %d\n%s", code, stderr)
		}
		if got := embeds(t, pageData(t, page, schema.StructPage), "/src/hot.c", src); got == off {
			t.Errorf("structure page %v: embeds the served source: %v", flags, got)
		}
		a, b := filepath.Join(dir, "a.hpcstruct"), filepath.Join(dir, "b.hpcstruct")
		for _, s := range [][2]string{{a, bin}, {b, testenv.Fixture(t, "../../testdata/bin/hot-gcc12-O0")}} {
			if code, _, stderr := captured(t, runStruct, "-q", "--nocache", "--no-debuginfod", "-o", s[0], s[1]); code != 0 {
				t.Fatalf("struct: exit %d\n%s", code, stderr)
			}
		}
		if code, _, stderr := captured(t, runDiff, append(append([]string{"--html", page}, flags...), a, b)...); code > 1 {
			t.Fatalf("diff: exit %d\n%s", code, stderr)
		}
		if got := embeds(t, pageData(t, page, schema.DiffPage), "/src/hot.c", src); got == off {
			t.Errorf("diff page %v: embeds the served source: %v", flags, got)
		}
		// The same two files as a pair of two directories.
		da, db := filepath.Join(dir, "da"), filepath.Join(dir, "db")
		for _, s := range [][2]string{{a, da}, {b, db}} {
			data, err := os.ReadFile(s[0])
			if err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(s[1], 0o755)
			if err := os.WriteFile(filepath.Join(s[1], "hot.hpcstruct"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if code, _, stderr := captured(t, runDiff, append(append([]string{"--html", page}, flags...), da, db)...); code > 1 {
			t.Fatalf("diff of directories: exit %d\n%s", code, stderr)
		}
		if got := embeds(t, pageData(t, page, schema.DiffPage), "/src/hot.c", src); got == off {
			t.Errorf("directory diff page %v: embeds the served source: %v", flags, got)
		}
	}
}

// TestReportDebuginfodDead: a dead server costs a report of a perf.data
// file whose modules are not here (each one an executable asked for by
// build-id, and libc's and the vdso's debug files) one warning and a
// bounded time, and changes no byte of the report.
func TestReportDebuginfodDead(t *testing.T) {
	data, _ := filepath.Abs("../../perfevent/testdata/fp.data")
	t.Setenv("DEBUGINFOD_CACHE_PATH", t.TempDir())
	t.Setenv("DEBUGINFOD_URLS", debuginfodtest.DeadURL(t))
	t.Setenv("DEBUGINFOD_TIMEOUT", "1")
	args := []string{"--nocache", "--view", "flat", data}
	code, plain, plainErr := captured(t, runReport, append([]string{"--no-debuginfod"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, plainErr)
	}
	t0 := time.Now()
	code, got, stderr := captured(t, runReport, args...)
	took := time.Since(t0)
	if code != 0 || got != plain {
		t.Errorf("exit %d, same report as without debuginfod: %v", code, got == plain)
	}
	// The time is logged, not asserted: what bounds it is that the
	// server, once failed, is not asked again (one warning).
	t.Logf("%v with a dead server", took)
	if ws, want := warningLines(stderr), len(warningLines(plainErr))+1; len(ws) != want {
		t.Errorf("warnings %q, want %d", ws, want)
	}
}

// TestReportMeasurementDirDebuginfod: a measurement directory's module,
// stripped on this machine after the run (hpcrun records no build-id:
// the file must be here), is reported with the debug file a real
// debuginfod serves by its build-id note: the report of the unstripped
// module.
func TestReportMeasurementDirDebuginfod(t *testing.T) {
	strip := testenv.Need(t, "strip")
	dir, prog, srv := measDirServed(t)
	report := func(args ...string) string {
		t.Helper()
		code, out, stderr := captured(t, runReport, append(append([]string{"--nocache", "--view", "flat", "--min", "0"}, args...), dir)...)
		if code != 0 || len(warningLines(stderr)) > 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		return out
	}
	want := report("--no-debuginfod")
	if out, err := exec.Command(strip, "--strip-debug", prog).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	t.Setenv("DEBUGINFOD_CACHE_PATH", t.TempDir())
	t.Setenv("DEBUGINFOD_URLS", srv.URL)
	if got := report("--no-debuginfod"); got == want {
		t.Fatal("stripping changed nothing")
	}
	if got := report(); got != want {
		t.Errorf("with debuginfod:\n%s\nunstripped:\n%s", got, want)
	}
}

// TestRecordingDebuginfod: a bloop recording names each mapped file's
// build-id, so that with the stripped program gone from this machine its
// report is the unstripped build's, from the executable and debug file a
// real debuginfod serves; the debug file alone serves while it is here.
func TestRecordingDebuginfod(t *testing.T) {
	srv, _, _, _, dir, prog := strippedHot(t)
	rec := filepath.Join(dir, "hot.rec")
	if code, _, stderr := captured(t, runRecord, "-o", rec, "--", prog, "50000000"); code != 0 {
		t.Fatalf("record: exit %d\n%s", code, stderr)
	}
	report := flatReport(t, rec, "--nocache")
	useServer(t, srv.URL)
	const want = "[inlined] hot_loop"
	if plain, _ := report("--no-debuginfod"); strings.Contains(plain, want) {
		t.Fatalf("the stripped program's report has %q without debuginfod:\n%s", want, plain)
	}
	here, _ := report()
	if !strings.Contains(here, want) {
		t.Errorf("no %q with the debug file from debuginfod:\n%s", want, here)
	}
	os.Remove(prog)
	gone, stderr := report()
	if gone != here || len(warningLines(stderr)) > 0 {
		t.Errorf("the program gone: warnings %q, report\n%s\nwant\n%s", warningLines(stderr), gone, here)
	}
}

// strippedHot is hotServer with a copy of its program without debug
// sections in dir, to be sampled: what a report must recover from the
// server.
func strippedHot(t *testing.T) (srv *debuginfodtest.Server, bin, src, id, dir, prog string) {
	t.Helper()
	testenv.NeedLinux(t)
	strip := testenv.Need(t, "strip")
	testenv.Capable(t, "perf_event_open", sample.Available())
	srv, bin, src, id = hotServer(t)
	dir = t.TempDir()
	prog = filepath.Join(dir, "hot")
	if out, err := exec.Command(strip, "--strip-debug", "-o", prog, bin).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	return srv, bin, src, id, dir, prog
}

// flatReport returns a runner of bloop report's flat view of input with
// flags and its own arguments: the output and stderr, failing t on an
// exit status other than 0.
func flatReport(t *testing.T, input string, flags ...string) func(args ...string) (string, string) {
	return func(args ...string) (string, string) {
		t.Helper()
		all := append(append(append([]string{"--view", "flat", "--min", "0"}, flags...), args...), input)
		code, out, stderr := captured(t, runReport, all...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		return out, stderr
	}
}

// useServer points the debuginfod client at url, with a cache of the
// test's own.
func useServer(t *testing.T, url string) {
	t.Setenv("DEBUGINFOD_CACHE_PATH", t.TempDir())
	t.Setenv("DEBUGINFOD_URLS", url)
	t.Setenv("DEBUGINFOD_TIMEOUT", "5")
}
