package structfile

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bloop/cache"
	"bloop/dyninst"
	"bloop/internal/nginxtest"
	"bloop/internal/testenv"
	"bloop/loader"
	"bloop/pipeline"
)

// copyBin copies a test binary to dir/sub/name, as if it were installed
// somewhere else.
func copyBin(t *testing.T, src, dir string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal("testdata binary missing")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// sameCounts compares what a hit says of the tree with the analysis.
func sameCounts(t *testing.T, what string, got, want *Result) {
	t.Helper()
	if got.NumProcs != want.NumProcs || got.NumFiles != want.NumFiles || got.NumLoops != want.NumLoops ||
		got.NumInlined != want.NumInlined || !reflect.DeepEqual(got.ProblemCounts, want.ProblemCounts) ||
		!reflect.DeepEqual(got.Warnings, want.Warnings) || !reflect.DeepEqual(got.Corrupt, want.Corrupt) {
		t.Errorf("%s: counts %d/%d/%d/%d %v, want %d/%d/%d/%d %v", what,
			got.NumProcs, got.NumFiles, got.NumLoops, got.NumInlined, got.ProblemCounts,
			want.NumProcs, want.NumFiles, want.NumLoops, want.NumInlined, want.ProblemCounts)
	}
}

// TestOneEntryForTwoCopies: the same binary in two directories is one
// entry, and each hit writes its own copy's path, byte for byte as an
// uncached run of that copy does, in both formats.
func TestOneEntryForTwoCopies(t *testing.T) {
	dir := t.TempDir()
	one := copyBin(t, bin, filepath.Join(dir, "one"))
	// A path with every character the formats escape.
	two := copyBin(t, bin, filepath.Join(dir, `tw&o <"x"> é`))
	for _, opt := range []Options{{}, {JSON: true}, {Pretty: true, Pipeline: pipeline.Options{Dyninst: dyninst.Hpcstruct}}} {
		c, err := cache.Open(filepath.Join(t.TempDir(), "cache"))
		if err != nil {
			t.Fatal(err)
		}
		k1, _ := Key(c, one, opt)
		k2, _ := Key(c, two, opt)
		if k1 != k2 {
			t.Fatalf("json=%v: two keys for one binary", opt.JSON)
		}
		fresh1, plain1 := run(t, nil, one, opt)
		_, plain2 := run(t, nil, two, opt)
		if bytes.Equal(plain1, plain2) {
			t.Fatal("the two copies' files do not differ: the test tests nothing")
		}
		if r, got := run(t, c, one, opt); r.Cached || !bytes.Equal(got, plain1) {
			t.Fatalf("json=%v: first run cached %v, same bytes %v", opt.JSON, r.Cached, bytes.Equal(got, plain1))
		}
		r, got := run(t, c, two, opt)
		if !r.Cached || r.CacheTier != cache.TierLocal {
			t.Fatalf("json=%v: the other copy misses (tier %q)", opt.JSON, r.CacheTier)
		}
		if !bytes.Equal(got, plain2) {
			t.Errorf("json=%v: the hit for the other copy differs from its uncached run", opt.JSON)
		}
		sameCounts(t, "hit", r, fresh1)
		if r, got := run(t, c, one, opt); !r.Cached || !bytes.Equal(got, plain1) {
			t.Errorf("json=%v: the first copy again: cached %v, same bytes %v", opt.JSON, r.Cached, bytes.Equal(got, plain1))
		}
		if n := countEntries(t, c); n != 1 {
			t.Errorf("json=%v: %d entries, want 1", opt.JSON, n)
		}
	}
}

func countEntries(t *testing.T, c *cache.Cache) int {
	n := 0
	filepath.WalkDir(c.Dir(), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, "-o") {
			n++
		}
		return nil
	})
	return n
}

// TestDamagedEntry: a stored file without its placeholder, or with notes
// that do not read, is analysed again; nothing of it is written.
func TestDamagedEntry(t *testing.T) {
	if _, err := os.Stat(bin); err != nil {
		t.Fatal("testdata binary missing")
	}
	c, _ := cache.Open(t.TempDir())
	_, want := run(t, nil, bin, Options{})
	run(t, c, bin, Options{})
	k, _ := Key(c, bin, Options{})
	base := filepath.Join(c.Dir(), k[:2], k)
	for _, damage := range []func(){
		func() { os.WriteFile(base+"-o", []byte("<?xml no placeholder here"), 0o644) },
		func() { os.WriteFile(base+"-n", []byte("{not json"), 0o644) },
		func() { os.WriteFile(base+"-n", []byte(`{"format":"bloop structure file 1"}`), 0o644) },
	} {
		damage()
		r, got := run(t, c, bin, Options{})
		if r.Cached || !bytes.Equal(got, want) {
			t.Errorf("damaged entry: cached %v, same bytes %v", r.Cached, bytes.Equal(got, want))
		}
		if r, got := run(t, c, bin, Options{}); !r.Cached || !bytes.Equal(got, want) {
			t.Errorf("the entry was not replaced: cached %v, same bytes %v", r.Cached, bytes.Equal(got, want))
		}
	}
}

// TestNotesRelocated: warnings that start with the input's or its debug
// file's path come back with the paths of the run that hits.
func TestNotesRelocated(t *testing.T) {
	at := relocation{bin: "/a/prog", dbg: "/usr/lib/debug/.build-id/ab/cd.debug"}
	r := &Result{
		Warnings: []string{at.dbg + ": separate debug file unreadable: EOF", at.bin + ": 3 relocations", "compile unit at 0x10 skipped: x /a/prog"},
		Corrupt:  []loader.Corruption{{Kind: "k", File: at.dbg}, {Kind: "k2"}},
		NumProcs: 4, ProblemCounts: map[string]int{"no control-flow graph": 2},
	}
	n := notesOf(r, at)
	for _, w := range n.Warnings {
		if strings.Contains(w, at.dbg+":") || strings.HasPrefix(w, at.bin) {
			t.Errorf("stored warning %q keeps a path", w)
		}
	}
	elsewhere := relocation{bin: "prog", dbg: "/b/prog.debug"}
	got := n.result(elsewhere)
	want := []string{"/b/prog.debug: separate debug file unreadable: EOF", "prog: 3 relocations", "compile unit at 0x10 skipped: x /a/prog"}
	if !reflect.DeepEqual(got.Warnings, want) || got.Corrupt[0].File != "/b/prog.debug" || got.Corrupt[1].File != "" {
		t.Errorf("relocated %q %+v", got.Warnings, got.Corrupt)
	}
	if got.NumProcs != 4 || got.ProblemCounts["no control-flow graph"] != 2 {
		t.Errorf("counts %+v", got)
	}
}

// TestBuildID: a clean stamped build is named by its revision, any other
// by its executable.
func TestBuildID(t *testing.T) {
	bi := func(kv ...string) *debug.BuildInfo {
		b := &debug.BuildInfo{Main: debug.Module{Path: "bloop", Version: "v1.2.3"}}
		for i := 0; i < len(kv); i += 2 {
			b.Settings = append(b.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return b
	}
	if got := buildID(bi("vcs.revision", "abc", "vcs.modified", "false")); got != "bloop v1.2.3 abc" {
		t.Errorf("clean build: %q", got)
	}
	for _, b := range []*debug.BuildInfo{bi("vcs.revision", "abc", "vcs.modified", "true"), bi("vcs.revision", "abc"), bi()} {
		if got := buildID(b); got != "" {
			t.Errorf("%v: %q", b.Settings, got)
		}
	}
}

// machine is a cache of its own with the remote tier at url.
func machine(t *testing.T, url string, opt cache.RemoteOptions) (*cache.Cache, *testenv.Warnings) {
	t.Helper()
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := &testenv.Warnings{}
	opt.URL, opt.Warn = url, l.Add
	if err := c.SetRemote(opt); err != nil {
		t.Fatal(err)
	}
	return c, l
}

// waits are the remote tier's waits for a proxy mode: short only for
// what stalls, so that a busy machine (CI beside other tests) does not
// turn a slow answer passed through into a failure no fault caused (a
// 300 ms watchdog on every request did so in cache/TestBreaker). In
// "stall-body" the entries' answers pass through and only the blobs'
// stall: its watchdog is long enough for those, short enough to wait
// for three times.
func waits(mode string) cache.RemoteOptions {
	o := cache.RemoteOptions{DialTimeout: 10 * time.Second, HeaderTimeout: 10 * time.Second, IdleTimeout: 10 * time.Second}
	switch mode {
	case "stall":
		o.HeaderTimeout = 300 * time.Millisecond
	case "stall-body":
		o.IdleTimeout = 2 * time.Second
	}
	return o
}

// TestRemoteNginx: a file analysed on one machine is fetched by another
// from a real nginx, for a copy of the binary in another directory, and
// is the bytes an uncached run of that copy writes, with the counts of
// the analysis.
func TestRemoteNginx(t *testing.T) {
	s := nginxtest.Start(t)
	dir := t.TempDir()
	one := copyBin(t, bin, filepath.Join(dir, "one"))
	two := copyBin(t, bin, filepath.Join(dir, "two"))
	for _, opt := range []Options{{}, {JSON: true}} {
		a, la := machine(t, s.URL+"/bloop", cache.RemoteOptions{})
		b, lb := machine(t, s.URL+"/bloop", cache.RemoteOptions{})
		fresh, _ := run(t, a, one, opt)
		if fresh.Cached || a.RemoteStats().Uploads != 1 {
			t.Fatalf("json=%v: first run cached %v, stats %+v", opt.JSON, fresh.Cached, a.RemoteStats())
		}
		_, want := run(t, nil, two, opt)
		r, got := run(t, b, two, opt)
		if !r.Cached || r.CacheTier != cache.TierRemote || !bytes.Equal(got, want) {
			t.Errorf("json=%v: other machine: tier %q, same bytes as uncached %v", opt.JSON, r.CacheTier, bytes.Equal(got, want))
		}
		sameCounts(t, "remote hit", r, fresh)
		if r, got := run(t, b, two, opt); r.CacheTier != cache.TierLocal || !bytes.Equal(got, want) {
			t.Errorf("json=%v: third run: tier %q, same bytes %v", opt.JSON, r.CacheTier, bytes.Equal(got, want))
		}
		if l := append(la.Lines(), lb.Lines()...); len(l) != 0 {
			t.Errorf("warnings %q", l)
		}
	}
}

var farm = []string{"loops-gcc12-O2", "loops-clang14-O2", "hot-gcc12-O2", "inline-gcc12-O2", "licm-gcc12-O2", "irred-gcc12-O2", "recur-gcc12-O2", "switch-gcc12-O2"}

// TestServerStoppedMidRun: nginx stops halfway through a run of several
// binaries; the second half is analysed here, the tier gives up after a
// few requests, and there is one warning line.
func TestServerStoppedMidRun(t *testing.T) {
	s := nginxtest.Start(t)
	c, l := machine(t, s.URL, cache.RemoteOptions{})
	var before cache.RemoteStats
	for i, name := range farm {
		if i == len(farm)/2 {
			before = c.RemoteStats()
			s.Stop()
		}
		b := filepath.Join("../testdata/bin", name)
		if _, err := os.Stat(b); err != nil {
			t.Fatal("testdata binary missing")
		}
		_, want := run(t, nil, b, Options{})
		r, got := run(t, c, b, Options{})
		if r.Cached || !bytes.Equal(got, want) {
			t.Errorf("%s: cached %v, same bytes %v", name, r.Cached, bytes.Equal(got, want))
		}
	}
	after := c.RemoteStats()
	if before.Uploads != len(farm)/2 || before.Failures != 0 {
		t.Errorf("before the stop: %+v", before)
	}
	if !after.Off || after.Requests-before.Requests != 3 {
		t.Errorf("after the stop: %+v; want off after 3 more requests", after)
	}
	if w := l.Lines(); len(w) != 1 || !strings.HasPrefix(w[0], "remote cache "+s.URL+": ") || !strings.HasSuffix(w[0], "; going on without it") {
		t.Errorf("warnings %q", w)
	}
}

// TestCorruptBlobOnServer: a blob damaged on nginx's disk is reported
// naming the entry, never written; the input is analysed here and the
// upload that follows puts the right blob back.
func TestCorruptBlobOnServer(t *testing.T) {
	s := nginxtest.Start(t)
	if _, err := os.Stat(bin); err != nil {
		t.Fatal("testdata binary missing")
	}
	a, _ := machine(t, s.URL, cache.RemoteOptions{})
	run(t, a, bin, Options{})
	k, _ := Key(a, bin, Options{})
	blobs, _ := filepath.Glob(s.Path("cas/*"))
	var biggest string
	var size int64
	for _, p := range blobs {
		if st, err := os.Stat(p); err == nil && st.Size() > size {
			biggest, size = p, st.Size()
		}
	}
	good, _ := os.ReadFile(biggest)
	bad := bytes.Replace(good, []byte("<P "), []byte("<Q "), 1)
	os.WriteFile(biggest, bad, 0o644)

	b, l := machine(t, s.URL, cache.RemoteOptions{})
	_, want := run(t, nil, bin, Options{})
	r, got := run(t, b, bin, Options{})
	if r.Cached || !bytes.Equal(got, want) {
		t.Errorf("cached %v, same bytes %v", r.Cached, bytes.Equal(got, want))
	}
	if w := l.Lines(); len(w) != 1 || !strings.Contains(w[0], k) || !strings.Contains(w[0], "hashes to") {
		t.Errorf("warnings %q, want one naming entry %s", w, k)
	}
	if fixed, _ := os.ReadFile(biggest); !bytes.Equal(fixed, good) {
		t.Error("the upload after the analysis did not repair the blob")
	}
	c, l := machine(t, s.URL, cache.RemoteOptions{})
	if r, got := run(t, c, bin, Options{}); r.CacheTier != cache.TierRemote || !bytes.Equal(got, want) {
		t.Errorf("after the repair: tier %q", r.CacheTier)
	}
	if w := l.Lines(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
}

// faultProxy stands in front of the real nginx and breaks what passes
// in the way its mode says.
type faultProxy struct {
	*httptest.Server
	target   string
	mode     atomic.Value // string
	requests atomic.Int64
	release  chan struct{}
	once     sync.Once
}

func newFaultProxy(t *testing.T, target string) *faultProxy {
	p := &faultProxy{target: target, release: make(chan struct{})}
	p.mode.Store("pass")
	p.Server = httptest.NewServer(p)
	t.Cleanup(p.finish)
	return p
}

// finish releases stalled requests and waits for every handler.
func (p *faultProxy) finish() {
	p.once.Do(func() {
		close(p.release)
		p.Close()
	})
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	mode := p.mode.Load().(string)
	switch mode {
	case "500", "401", "403":
		code, _ := strconv.Atoi(mode)
		http.Error(w, "fault", code)
		return
	case "stall":
		select {
		case <-p.release:
		case <-r.Context().Done():
		}
		return
	case "reset":
		hijackClose(w, true)
		return
	}
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), r.Body)
	req.ContentLength = r.ContentLength
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if r.Method != http.MethodGet || resp.StatusCode != http.StatusOK || !strings.Contains(r.URL.Path, "/cas/") {
		mode = "pass"
	}
	switch mode {
	case "truncate": // half the body, then the connection closes
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(resp.StatusCode)
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		hijackClose(w, false)
	case "short": // half the body, said to be all of it
		w.Header().Set("Content-Length", fmt.Sprint(len(body)/2))
		w.WriteHeader(resp.StatusCode)
		w.Write(body[:len(body)/2])
	case "stall-body": // half the body, then nothing
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(resp.StatusCode)
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		select {
		case <-p.release:
		case <-r.Context().Done():
		}
	default:
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(resp.StatusCode)
		w.Write(body)
	}
}

func hijackClose(w http.ResponseWriter, rst bool) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	if rst {
		conn.(*net.TCPConn).SetLinger(0)
	}
	conn.Close()
}

// TestProxyFaults: a proxy in front of the real nginx, which holds every
// entry, answers 500s, 401s, stalls, resets, or cuts blobs short. Every
// run still writes the right file; the tier costs at most three failed
// requests (one for a 401) and one warning; blobs cut short with a
// consistent length are refused by their hash, naming the entry.
func TestProxyFaults(t *testing.T) {
	s := nginxtest.Start(t)
	var bins []string
	for _, name := range farm[:4] {
		bins = append(bins, filepath.Join("../testdata/bin", name))
	}
	if _, err := os.Stat(bins[0]); err != nil {
		t.Fatal("testdata binary missing")
	}
	want := map[string][]byte{}
	filler, _ := machine(t, s.URL, cache.RemoteOptions{})
	for _, b := range bins {
		_, want[b] = run(t, filler, b, Options{})
	}
	for _, tc := range []struct {
		mode     string
		failures int    // requests the breaker counts
		warning  string // in the one warning line
		perEntry bool   // each entry is refused and named instead
	}{
		{"pass", 0, "", false},
		{"500", 3, "500 Internal Server Error", false},
		{"401", 1, "401 Unauthorized", false},
		{"403", 1, "403 Forbidden", false},
		{"stall", 3, "timeout awaiting response headers", false},
		{"stall-body", 3, "no data moved", false},
		{"reset", 3, "GET ac/", false},
		{"truncate", 3, "connection closed before the end of the body", false},
		{"short", 0, "the record says", true},
	} {
		p := newFaultProxy(t, s.URL)
		p.mode.Store(tc.mode)
		c, l := machine(t, p.URL, waits(tc.mode))
		for _, b := range bins {
			r, got := run(t, c, b, Options{})
			if !bytes.Equal(got, want[b]) {
				t.Errorf("%s: %s: wrong output", tc.mode, b)
			}
			if tc.mode == "pass" != (r.CacheTier == cache.TierRemote) {
				t.Errorf("%s: %s: tier %q", tc.mode, b, r.CacheTier)
			}
		}
		p.finish()
		st := c.RemoteStats()
		w := l.Lines()
		switch {
		case tc.mode == "pass":
			if st.Hits != len(bins) || len(w) != 0 {
				t.Errorf("pass: stats %+v, warnings %q", st, w)
			}
		case tc.perEntry:
			if len(w) != len(bins) || st.Bad != len(bins) || st.Off {
				t.Errorf("%s: stats %+v, warnings %q", tc.mode, st, w)
			}
			for _, line := range w {
				if !strings.Contains(line, tc.warning) || !strings.Contains(line, "entry ") {
					t.Errorf("%s: warning %q", tc.mode, line)
				}
			}
		default:
			if !st.Off || st.Failures != tc.failures || int(p.requests.Load()) != st.Requests {
				t.Errorf("%s: stats %+v, proxy saw %d requests", tc.mode, st, p.requests.Load())
			}
			if len(w) != 1 || !strings.Contains(w[0], tc.warning) {
				t.Errorf("%s: warnings %q, want one with %q", tc.mode, w, tc.warning)
			}
		}
	}
}
