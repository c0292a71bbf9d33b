package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"bloop/internal/debuginfodtest"
	"bloop/internal/testenv"
	"bloop/meas"
	"bloop/structfile"
)

// debuginfodCorpus are unstripped programs of each architecture, with
// the strip that removes their debug info.
var debuginfodCorpus = []struct{ bin, strip string }{
	{"../../testdata/bin/inline-gcc12-O2", "strip"},
	{"../../testdata/bin-arm64/inline-gcc12-O2", "aarch64-linux-gnu-strip"},
}

// debuginfodSetup copies the corpus's programs unstripped into served/
// and stripped (--strip-debug) into stripped/, under the same names, and
// starts a real debuginfod over served/. It returns both directories'
// files in order, and the server.
func debuginfodSetup(t *testing.T) (served, stripped []string, srv *debuginfodtest.Server) {
	t.Helper()
	dir := t.TempDir()
	sdir, xdir := filepath.Join(dir, "served"), filepath.Join(dir, "stripped")
	os.Mkdir(sdir, 0o755)
	os.Mkdir(xdir, 0o755)
	var ids []string
	for _, c := range debuginfodCorpus {
		strip := testenv.Need(t, c.strip)
		name := filepath.Base(filepath.Dir(c.bin)) + "-" + filepath.Base(c.bin)
		b, err := os.ReadFile(testenv.Fixture(t, c.bin))
		if err != nil {
			t.Fatal(err)
		}
		s, x := filepath.Join(sdir, name), filepath.Join(xdir, name)
		if err := os.WriteFile(s, b, 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(strip, "--strip-debug", "-o", x, s).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", c.strip, err, out)
		}
		served, stripped = append(served, s), append(stripped, x)
		ids = append(ids, debuginfodtest.BuildID(t, s))
	}
	return served, stripped, debuginfodtest.Start(t, sdir, ids...)
}

// structOf runs bloop struct on bin and returns its exit status, output
// and stderr, with the module path put back to want's directory.
func structOf(t *testing.T, bin, asDir string, args ...string) (int, []byte, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.hpcstruct")
	code, _, stderr := captured(t, runStruct, append(append([]string{"-q", "-o", out}, args...), bin)...)
	b, _ := os.ReadFile(out)
	if asDir != "" {
		b = bytes.ReplaceAll(b, []byte(filepath.Dir(bin)), []byte(asDir))
	}
	return code, b, stderr
}

// TestStructDebuginfod: stripped x86-64 and aarch64 programs get the
// structure of their unstripped builds from a real debuginfod, a
// structure cached before without debug info is not served then, -v and
// the manifest say where the debug file came from, and with the server
// gone a second run is served from the client cache, with no warning.
func TestStructDebuginfod(t *testing.T) {
	served, stripped, srv := debuginfodSetup(t)
	t.Setenv("DEBUGINFOD_CACHE_PATH", t.TempDir())
	t.Setenv("DEBUGINFOD_URLS", srv.URL)
	t.Setenv("DEBUGINFOD_TIMEOUT", "2")
	for i := range served {
		name := filepath.Base(served[i])
		_, want, _ := structOf(t, served[i], "")
		// First without debuginfod: the structure cache holds it.
		code, plain, _ := structOf(t, stripped[i], filepath.Dir(served[i]), "--no-debuginfod")
		if code != 0 || bytes.Equal(plain, want) {
			t.Fatalf("%s: without debuginfod: exit %d, same as unstripped: %v", name, code, bytes.Equal(plain, want))
		}
		man := filepath.Join(t.TempDir(), "manifest")
		code, got, stderr := structOf(t, stripped[i], filepath.Dir(served[i]), "-v", "--manifest", man)
		if code != 0 || !bytes.Equal(got, want) {
			t.Errorf("%s: with debuginfod: exit %d, same as unstripped: %v\n%s", name, code, bytes.Equal(got, want), stderr)
		}
		if !strings.Contains(stderr, "(debuginfod)") || len(warningLines(stderr)) > 0 {
			t.Errorf("%s: -v: %s", name, stderr)
		}
		var rec structfile.Record
		if b, err := os.ReadFile(man); err != nil || json.Unmarshal(b, &rec) != nil {
			t.Fatalf("%s: manifest: %v", name, err)
		}
		if rec.DebugSource != "debuginfod" || !strings.HasSuffix(rec.DebugFile, "/debuginfo") {
			t.Errorf("%s: manifest says debug file %q from %q", name, rec.DebugFile, rec.DebugSource)
		}
	}
	srv.Stop()
	for i := range served {
		_, want, _ := structOf(t, served[i], "")
		code, got, stderr := structOf(t, stripped[i], filepath.Dir(served[i]), "--nocache")
		if code != 0 || !bytes.Equal(got, want) || len(warningLines(stderr)) > 0 {
			t.Errorf("%s: server gone: exit %d, same as unstripped: %v\n%s", filepath.Base(served[i]), code, bytes.Equal(got, want), stderr)
		}
	}
}

// TestStructDebuginfodFaults: a server that is dead, stalls, refuses or
// answers wrongly costs one warning in a whole batch, and the output is
// byte for byte what it is without debuginfod; nothing wrong is cached.
func TestStructDebuginfodFaults(t *testing.T) {
	_, stripped, srv := debuginfodSetup(t)
	in := filepath.Dir(stripped[0])
	batch := func(t *testing.T, args ...string) (map[string][]byte, string) {
		out := t.TempDir()
		code, _, stderr := captured(t, runStruct, append([]string{"-q", "--nocache", "-o", out}, append(args, in)...)...)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		files := map[string][]byte{}
		for _, p := range stripped {
			b, err := os.ReadFile(filepath.Join(out, filepath.Base(p)+".hpcstruct"))
			if err != nil {
				t.Fatal(err)
			}
			files[filepath.Base(p)] = b
		}
		return files, stderr
	}
	t.Setenv("DEBUGINFOD_TIMEOUT", "1")
	plain, _ := batch(t, "--no-debuginfod")
	for _, fault := range []string{debuginfodtest.NotFound, debuginfodtest.Error, debuginfodtest.Truncate,
		debuginfodtest.Other, debuginfodtest.Garbage, debuginfodtest.Stall, "dead"} {
		t.Run(fault, func(t *testing.T) {
			url := debuginfodtest.DeadURL(t)
			if fault != "dead" {
				p := debuginfodtest.NewProxy(t, srv.URL, fault)
				// An ELF file of another build-id than any asked for.
				p.OtherFile = testenv.Fixture(t, "../../testdata/bin/hot-gcc12-O2")
				url = p.URL
			}
			cache := t.TempDir()
			t.Setenv("DEBUGINFOD_CACHE_PATH", cache)
			t.Setenv("DEBUGINFOD_URLS", strings.Replace(url, "http://", "http://bloop:pa55@", 1))
			t0 := time.Now()
			got, stderr := batch(t)
			t.Logf("%v: %q", time.Since(t0), warningLines(stderr))
			for name, b := range got {
				if !bytes.Equal(b, plain[name]) {
					t.Errorf("%s differs from the output without debuginfod", name)
				}
			}
			ws := warningLines(stderr)
			want := 1
			if fault == debuginfodtest.NotFound {
				want = 0 // a miss, not a fault
			}
			if len(ws) != want || strings.Contains(stderr, "pa55") {
				t.Errorf("warnings %q, want %d without credentials", ws, want)
			}
			ents, _ := filepath.Glob(filepath.Join(cache, "*", "*"))
			for _, e := range ents {
				if st, err := os.Stat(e); err == nil && st.Size() > 0 {
					t.Errorf("cached: %s", e)
				}
			}
		})
	}
}

// TestStructMeasurementDirDebuginfod: a measurement directory's module,
// stripped on this machine, gets its structs/ file from its unstripped
// build on a real debuginfod, the same as when it was not stripped.
func TestStructMeasurementDirDebuginfod(t *testing.T) {
	strip := testenv.Need(t, "strip")
	dir, prog, srv := measDirServed(t)
	structs := func(args ...string) []byte {
		t.Helper()
		os.RemoveAll(meas.StructsDir(dir))
		if code, _, stderr := captured(t, runStruct, append(append([]string{"-q", "--nocache"}, args...), dir)...); code != 0 || len(warningLines(stderr)) > 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		got, _ := os.ReadFile(filepath.Join(meas.StructsDir(dir), "prog.hpcstruct"))
		return got
	}
	want := structs()
	if out, err := exec.Command(strip, "--strip-debug", prog).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	t.Setenv("DEBUGINFOD_CACHE_PATH", t.TempDir())
	t.Setenv("DEBUGINFOD_URLS", srv.URL)
	if got := structs("--no-debuginfod"); bytes.Equal(got, want) {
		t.Fatal("stripping changed nothing")
	}
	if got := structs(); len(want) == 0 || !bytes.Equal(got, want) {
		t.Error("structs/prog.hpcstruct of the stripped module differs from the unstripped one's")
	}
}

// TestInterruptDebuginfodDownload interrupts bloop struct (a child
// process) while it downloads a debug file: no partial entry and no
// temporary file is left in the client cache.
func TestInterruptDebuginfodDownload(t *testing.T) {
	strip := testenv.Need(t, "strip")
	bin := filepath.Join(t.TempDir(), "prog")
	if out, err := exec.Command(strip, "--strip-debug", "-o", bin, testenv.Fixture(t, "../../testdata/bin/inline-gcc12-O2")).CombinedOutput(); err != nil {
		t.Fatalf("strip: %v\n%s", err, out)
	}
	// A server that sends the head and a few bytes, then nothing.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.Write(make([]byte, 64))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	defer srv.CloseClientConnections()
	cache := t.TempDir()
	entry := filepath.Join(cache, debuginfodtest.BuildID(t, bin))
	cmd := exec.Command(os.Args[0], "struct", "-q", "--nocache", "-o", filepath.Join(t.TempDir(), "out"), bin)
	cmd.Env = append(os.Environ(), "BLOOP_TEST_MAIN=1", "DEBUGINFOD_URLS="+srv.URL,
		"DEBUGINFOD_CACHE_PATH="+cache, "DEBUGINFOD_TIMEOUT=60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m, _ := filepath.Glob(filepath.Join(entry, "debuginfo.*")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("no download started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGINT) {
		t.Errorf("%v, want exit status %d", err, 128+int(syscall.SIGINT))
	}
	ents, _ := os.ReadDir(entry)
	for _, e := range ents {
		t.Errorf("%s left behind", e.Name())
	}
}

// measDirServed is measDir with a real debuginfod serving a copy of its
// program, unstripped, by its build-id.
func measDirServed(t *testing.T) (dir, prog string, srv *debuginfodtest.Server) {
	t.Helper()
	dir, prog = measDir(t)
	sdir := t.TempDir()
	served := filepath.Join(sdir, "prog")
	b, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(served, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir, prog, debuginfodtest.Start(t, sdir, debuginfodtest.BuildID(t, served))
}

// TestHybridDebuginfodSources: the default (hybrid) mode puts loops on
// their statement's line from a source that only a real debuginfod
// serves (the line table's /src/loops.c is not on this machine), to the
// structure that the source found here with -I gives, not the one made
// without it. With the server gone, the client's cache serves the source,
// and the structure cache's entry stays valid; once the fetched copy is
// gone, the entry is stale.
func TestHybridDebuginfodSources(t *testing.T) {
	bin := testenv.Fixture(t, "../../testdata/bin/loops-gcc12-O2")
	src := testenv.Fixture(t, "../../testdata/src/loops.c")
	if _, err := os.Stat("/src/loops.c"); err == nil {
		t.Skip("/src/loops.c is on this machine: the server's would not be asked for")
	}
	served := filepath.Join(t.TempDir(), "served")
	os.Mkdir(served, 0o755)
	id := debuginfodtest.BuildID(t, bin)
	writeTar(t, filepath.Join(served, "loops.tar"), map[string]string{"usr/bin/loops": bin, "src/loops.c": src})
	srv := debuginfodtest.StartTar(t, served, id)
	clientCache := t.TempDir()
	t.Setenv("DEBUGINFOD_CACHE_PATH", clientCache)
	t.Setenv("DEBUGINFOD_URLS", srv.URL)
	t.Setenv("DEBUGINFOD_TIMEOUT", "5")
	structure := func(args ...string) (string, string) {
		t.Helper()
		code, out, stderr := captured(t, runStruct, append([]string{"-q", "-o", "-"}, append(args, bin)...)...)
		if code != 0 {
			t.Fatalf("struct %q: exit %d\n%s", args, code, stderr)
		}
		return out, stderr
	}
	local, _ := structure("--nocache", "--no-debuginfod", "-I", filepath.Dir(src))
	none, _ := structure("--nocache", "--no-debuginfod")
	if local == none {
		t.Fatal("the source changes nothing of loops-gcc12-O2's structure: the test proves nothing")
	}
	structCache := t.TempDir()
	if got, _ := structure("-c", structCache); got != local {
		t.Errorf("with the source from debuginfod: the structure without it: %v", got == none)
	}
	if got, _ := structure("--nocache", "--no-debuginfod"); got != none {
		t.Error("--no-debuginfod: not the structure without the source")
	}

	srv.Stop()
	if got, _ := structure("--nocache"); got != local {
		t.Error("server gone: the source is not served from the client's cache")
	}
	got, stderr := structure("-v", "-c", structCache)
	if got != local || !strings.Contains(stderr, "structure file from the cache") {
		t.Errorf("server gone: the structure with the source %v, from the structure cache\n%s", got == local, stderr)
	}
	copies, _ := filepath.Glob(filepath.Join(clientCache, id, "source*loops.c"))
	if len(copies) != 1 {
		t.Fatalf("client cache copies of loops.c: %q", copies)
	}
	os.Remove(copies[0])
	got, stderr = structure("-v", "-c", structCache)
	if got != none || strings.Contains(stderr, "structure file from the cache") {
		t.Errorf("fetched copy gone, server gone: the structure without the source %v, stale entry served\n%s", got == none, stderr)
	}
}
