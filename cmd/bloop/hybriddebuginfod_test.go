package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/debuginfodtest"
	"bloop/internal/testenv"
)

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
