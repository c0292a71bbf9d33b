package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"bloop/cache"
	"bloop/internal/nginxtest"
)

// warningLines are the "bloop: warning:" lines of stderr.
func warningLines(stderr string) []string {
	var out []string
	for l := range strings.SplitSeq(stderr, "\n") {
		if strings.HasPrefix(l, "bloop: warning: ") {
			out = append(out, l)
		}
	}
	return out
}

// TestStructRemoteCache: bloop struct on one machine uploads to a real
// nginx; on another (another local cache directory) it fetches the same
// bytes, from --cache-url or $BLOOP_CACHE_URL; --cache-readonly never
// uploads and --nocache never asks.
func TestStructRemoteCache(t *testing.T) {
	if _, err := os.Stat(example); err != nil {
		t.Fatal("testdata binary missing")
	}
	s := nginxtest.Start(t)
	dir := t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	code, _, stderr := captured(t, runStruct, "-c", out("a"), "--cache-url", s.URL+"/bloop", "-o", out("a.hpcstruct"), example)
	if code != 0 || stderr != "" {
		t.Fatalf("first machine: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = captured(t, runStruct, "-c", out("b"), "--cache-url", s.URL+"/bloop", "-v", "-o", out("b.hpcstruct"), example)
	if code != 0 || !strings.Contains(stderr, "structure file from the cache") {
		t.Fatalf("second machine: exit %d, stderr %q", code, stderr)
	}
	a, _ := os.ReadFile(out("a.hpcstruct"))
	b, _ := os.ReadFile(out("b.hpcstruct"))
	if len(a) == 0 || string(a) != string(b) {
		t.Error("the fetched file differs from the analysed one")
	}
	puts := func() int {
		n := 0
		for _, l := range s.AccessLog() {
			if strings.Contains(l, `"PUT `) {
				n++
			}
		}
		return n
	}
	uploaded := puts()
	if uploaded == 0 {
		t.Fatal("nothing uploaded")
	}
	t.Setenv(cache.URLEnvVar, s.URL+"/bloop")
	code, _, stderr = captured(t, runStruct, "-c", out("c"), "-v", "-o", out("c.hpcstruct"), example)
	if code != 0 || !strings.Contains(stderr, "structure file from the cache") {
		t.Errorf("$%s: exit %d, stderr %q", cache.URLEnvVar, code, stderr)
	}
	// Another format is another entry: read-only analyses it and keeps
	// it to itself.
	code, _, stderr = captured(t, runStruct, "-c", out("d"), "--cache-readonly", "--format", "json", "-o", out("d.json"), example)
	if code != 0 || stderr != "" || puts() != uploaded {
		t.Errorf("--cache-readonly: exit %d, stderr %q, %d uploads before, %d after", code, stderr, uploaded, puts())
	}
	requests := len(s.AccessLog())
	code, _, _ = captured(t, runStruct, "--nocache", "-o", out("e.json"), "--format", "json", example)
	if code != 0 || len(s.AccessLog()) != requests {
		t.Errorf("--nocache: exit %d, %d requests", code, len(s.AccessLog())-requests)
	}
}

// TestStructRemoteFailures: a server that is down or refuses the
// credentials costs one warning line and no secret is shown; the run
// writes the analysed file and exits 0.
func TestStructRemoteFailures(t *testing.T) {
	if _, err := os.Stat(example); err != nil {
		t.Fatal("testdata binary missing")
	}
	const pass, token = "pa55-w0rd-zz", "bearer-t0ken-qq"
	dir := t.TempDir()
	want := filepath.Join(dir, "want.hpcstruct")
	if code, _, _ := captured(t, runStruct, "--nocache", "-o", want, example); code != 0 {
		t.Fatal("uncached run failed")
	}
	wantBytes, _ := os.ReadFile(want)

	var requests atomic.Int64
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "who are you", http.StatusUnauthorized)
	}))
	defer refuse.Close()
	down := nginxtest.Start(t)
	down.Stop()

	withUser := func(u string) string { return strings.Replace(u, "http://", "http://ci:"+pass+"@", 1) }
	for i, tc := range []struct {
		name, url, token, warning string
	}{
		{"401 with a password", withUser(refuse.URL) + "/c?key=" + pass, "", "401 Unauthorized"},
		{"401 with a token", refuse.URL + "/c", token, "401 Unauthorized"},
		{"server down", withUser(down.URL), token, "connection refused"},
		{"not a URL", "ftp://ci:" + pass + "@host/", token, "remote cache URL"},
	} {
		t.Setenv(cache.TokenEnvVar, tc.token)
		out := filepath.Join(dir, "out.hpcstruct")
		code, _, stderr := captured(t, runStruct, "-c", filepath.Join(dir, "cache", string(rune('a'+i))), "--cache-url", tc.url, "-o", out, example)
		got, _ := os.ReadFile(out)
		if code != 0 || string(got) != string(wantBytes) {
			t.Errorf("%s: exit %d, right output %v", tc.name, code, string(got) == string(wantBytes))
		}
		w := warningLines(stderr)
		if len(w) != 1 || !strings.Contains(w[0], tc.warning) || !strings.HasSuffix(w[0], "; going on without it") || len(w) != strings.Count(stderr, "\n") {
			t.Errorf("%s: stderr %q, want one warning line with %q", tc.name, stderr, tc.warning)
		}
		if strings.Contains(stderr, pass) || strings.Contains(stderr, token) {
			t.Errorf("%s: stderr shows a secret: %q", tc.name, stderr)
		}
	}
	if requests.Load() != 2 {
		t.Errorf("the refusing server got %d requests, want one per run", requests.Load())
	}
}

// TestStructTwoCopiesOneEntry: the same binary in two directories is one
// cache entry, and each run writes what an uncached run of its copy
// writes (its own LM path), in both formats.
func TestStructTwoCopiesOneEntry(t *testing.T) {
	b, err := os.ReadFile(example)
	if err != nil {
		t.Fatal("testdata binary missing")
	}
	dir := t.TempDir()
	var copies []string
	for _, d := range []string{"one", "two & <three>"} {
		p := filepath.Join(dir, d, "loops")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, b, 0o755)
		copies = append(copies, p)
	}
	for _, format := range []string{"xml", "json"} {
		cacheDir := filepath.Join(dir, "cache-"+format)
		var outputs []string
		for i, bin := range copies {
			want, got := filepath.Join(dir, "want"), filepath.Join(dir, "got")
			if code, _, _ := captured(t, runStruct, "--nocache", "--format", format, "-o", want, bin); code != 0 {
				t.Fatal("uncached run failed")
			}
			code, _, stderr := captured(t, runStruct, "-c", cacheDir, "-v", "--format", format, "-o", got, bin)
			if code != 0 || (i == 1) != strings.Contains(stderr, "structure file from the cache") {
				t.Errorf("%s, copy %d: exit %d, stderr %q", format, i, code, stderr)
			}
			w, _ := os.ReadFile(want)
			g, _ := os.ReadFile(got)
			if string(w) != string(g) {
				t.Errorf("%s, copy %d: the cached run's file differs from the uncached one", format, i)
			}
			outputs = append(outputs, string(g))
		}
		if outputs[0] == outputs[1] {
			t.Errorf("%s: both copies got one file: no path in it", format)
		}
	}
}
