package cache

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"bloop/internal/nginxtest"
	"bloop/internal/testenv"
)

// patient are waits for servers that answer: long, so that a busy
// machine (CI beside other tests and busy loops) does not make a slow
// answer a failure no fault caused (an upload's answer waited past a
// 300 ms watchdog once). stalling are waits short enough for servers
// that stall, in tests where every request stalls.
var (
	patient  = RemoteOptions{DialTimeout: 10 * time.Second, HeaderTimeout: 10 * time.Second, IdleTimeout: 10 * time.Second}
	stalling = func(header, idle time.Duration) RemoteOptions {
		return RemoteOptions{DialTimeout: 10 * time.Second, HeaderTimeout: header, IdleTimeout: idle}
	}
)

// remoteCache is a cache in a directory of its own (another machine)
// with the remote tier at url.
func remoteCache(t *testing.T, url string, opt RemoteOptions) (*Cache, *testenv.Warnings) {
	t.Helper()
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &testenv.Warnings{}
	opt.URL, opt.Warn = url, w.Add
	if err := c.SetRemote(opt); err != nil {
		t.Fatal(err)
	}
	return c, w
}

func putEntry(t *testing.T, c *Cache, key, content, notes string, deps ...string) {
	t.Helper()
	e, err := c.Create(key)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(e, content)
	e.SetNotes([]byte(notes))
	for _, d := range deps {
		e.DependsOn(d)
	}
	if err := e.Commit(); err != nil {
		t.Fatal(err)
	}
}

func lookup(c *Cache, key string) (content, notes, tier string, ok bool) {
	h := c.Lookup(key)
	if h == nil {
		return "", "", "", false
	}
	defer h.Close()
	b, _ := io.ReadAll(h)
	return string(b), string(h.Notes), h.Tier, true
}

// TestRemoteNginx: an entry committed on one machine is uploaded to a
// real nginx (WebDAV PUT) in the content-addressed layout, fetched by
// another machine, verified and stored there, and is a local hit after.
func TestRemoteNginx(t *testing.T) {
	s := nginxtest.Start(t)
	a, wa := remoteCache(t, s.URL+"/bloop/", RemoteOptions{})
	b, wb := remoteCache(t, s.URL+"/bloop", RemoteOptions{})
	k := Key("entry")
	content := strings.Repeat("structure ", 1000)
	putEntry(t, a, k, content, `{"procs":3}`)
	if st := a.RemoteStats(); st.Uploads != 1 || st.Failures != 0 {
		t.Fatalf("uploader stats %+v", st)
	}
	// The layout on the server's disk: the record under ac/<key>, each
	// blob under cas/<its sha256>.
	rec, err := os.ReadFile(s.Path("bloop/ac/" + k))
	if err != nil {
		t.Fatal(err)
	}
	refs, err := decodeRecord(rec)
	if err != nil || len(refs) != 3 {
		t.Fatalf("record on the server: %+v %v", refs, err)
	}
	for _, r := range refs {
		if r.Size == 0 {
			if _, err := os.Stat(s.Path("bloop/cas/" + r.Hash)); err == nil {
				t.Errorf("empty blob %s uploaded", r.Name)
			}
			continue
		}
		blob, err := os.ReadFile(s.Path("bloop/cas/" + r.Hash))
		if err != nil || sha256Hex(blob) != r.Hash || int64(len(blob)) != r.Size {
			t.Errorf("blob %s on the server: %d bytes, %v", r.Name, len(blob), err)
		}
	}
	got, notes, tier, ok := lookup(b, k)
	if !ok || got != content || notes != `{"procs":3}` || tier != TierRemote {
		t.Fatalf("remote lookup: ok %v tier %q notes %q, %d bytes", ok, tier, notes, len(got))
	}
	if _, _, tier, _ := lookup(b, k); tier != TierLocal {
		t.Errorf("second lookup from tier %q, want local", tier)
	}
	if st := b.RemoteStats(); st.Hits != 1 || st.Requests != 3 || st.Uploads != 0 {
		t.Errorf("fetcher stats %+v (want 1 hit in 3 requests: record, notes, output)", st)
	}
	if _, ok := get(b, Key("absent")); ok {
		t.Error("hit of an absent key")
	}
	if _, _, _, ok := lookup(b, Key("absent")); ok || b.RemoteStats().Misses != 1 {
		t.Errorf("absent key: ok %v, stats %+v", ok, b.RemoteStats())
	}
	if w := append(wa.Lines(), wb.Lines()...); len(w) != 0 {
		t.Errorf("warnings: %q", w)
	}
}

// TestRemoteVerify: what comes back is checked before it is used: a blob
// corrupted or cut short on the server's disk, a record that does not
// parse or names a missing blob are misses, reported once per key, and
// leave no local entry.
func TestRemoteVerify(t *testing.T) {
	s := nginxtest.Start(t)
	a, _ := remoteCache(t, s.URL, RemoteOptions{})
	blobOf := func(k string) string {
		rec, err := os.ReadFile(s.Path("ac/" + k))
		if err != nil {
			t.Fatal(err)
		}
		refs, err := decodeRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range refs {
			if r.Name == blobOut {
				return s.Path("cas/" + r.Hash)
			}
		}
		t.Fatal("no output blob")
		return ""
	}
	for _, tc := range []struct {
		name, want string
		damage     func(k string)
	}{
		{"flipped byte", "hashes to", func(k string) {
			p := blobOf(k)
			b, _ := os.ReadFile(p)
			b[len(b)/2] ^= 1
			os.WriteFile(p, b, 0o644)
		}},
		{"short blob", "the record says", func(k string) {
			p := blobOf(k)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-7], 0o644)
		}},
		{"foreign blob", "hashes to", func(k string) {
			p := blobOf(k)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Repeat([]byte("x"), len(b)), 0o644)
		}},
		{"missing blob", "is missing", func(k string) { os.Remove(blobOf(k)) }},
		{"garbage record", "does not parse", func(k string) {
			os.WriteFile(s.Path("ac/"+k), []byte("<html>oops</html>"), 0o644)
		}},
		{"record without notes", `no "notes" blob`, func(k string) {
			os.WriteFile(s.Path("ac/"+k), encodeRecord([]blobRef{{blobOut, emptyHash, 0}, {blobDeps, emptyHash, 0}}), 0o644)
		}},
	} {
		k := Key("verify", tc.name)
		content := strings.Repeat(tc.name, 500)
		putEntry(t, a, k, content, "n")
		tc.damage(k)
		b, w := remoteCache(t, s.URL, RemoteOptions{})
		for range 2 {
			if got, _, _, ok := lookup(b, k); ok {
				t.Errorf("%s: a hit of %d bytes", tc.name, len(got))
			}
		}
		if f := b.Get(k); f != nil {
			f.Close()
			t.Errorf("%s: stored locally", tc.name)
		}
		lines := w.Lines()
		if len(lines) != 1 || !strings.Contains(lines[0], k) || !strings.Contains(lines[0], tc.want) {
			t.Errorf("%s: warnings %q, want one naming the key and %q", tc.name, lines, tc.want)
		}
		if st := b.RemoteStats(); st.Bad != 2 || st.Failures != 0 || st.Off {
			t.Errorf("%s: stats %+v", tc.name, st)
		}
	}
}

// TestRemoteDependencies: an entry whose dependency list does not hold on
// the fetching machine is a plain miss, without downloading the output.
func TestRemoteDependencies(t *testing.T) {
	s := nginxtest.Start(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "x.c")
	os.WriteFile(src, []byte("int x;"), 0o644)
	a, _ := remoteCache(t, s.URL, RemoteOptions{})
	k := Key("deps")
	putEntry(t, a, k, "out", "n", src)
	os.WriteFile(src, []byte("int y;"), 0o644)
	b, w := remoteCache(t, s.URL, RemoteOptions{})
	if _, _, _, ok := lookup(b, k); ok {
		t.Fatal("hit with a changed dependency")
	}
	// Two requests: the record and the dependency list.
	if st := b.RemoteStats(); st.Misses != 1 || st.Requests != 2 || st.Bad != 0 {
		t.Errorf("stats %+v", st)
	}
	if len(w.Lines()) != 0 {
		t.Errorf("warnings %q", w.Lines())
	}
	os.WriteFile(src, []byte("int x;"), 0o644)
	if _, _, tier, ok := lookup(b, k); !ok || tier != TierRemote {
		t.Error("miss once the dependency is back")
	}
}

// TestReadOnly: a read-only tier fetches and never uploads.
func TestReadOnly(t *testing.T) {
	s := nginxtest.Start(t)
	c, _ := remoteCache(t, s.URL, RemoteOptions{ReadOnly: true})
	putEntry(t, c, Key("ro"), "content", "n")
	for _, l := range s.AccessLog() {
		if strings.Contains(l, "PUT") {
			t.Errorf("a read-only cache uploaded: %s", l)
		}
	}
	if st := c.RemoteStats(); st.Requests != 0 || st.Uploads != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestServerStopped: nginx stops in the middle of a run; the entries
// after go on locally, the tier goes off after maxFailures requests and
// asks nothing more, with one warning line.
func TestServerStopped(t *testing.T) {
	s := nginxtest.Start(t)
	c, w := remoteCache(t, s.URL, RemoteOptions{})
	for i := range 3 {
		putEntry(t, c, Key("before", fmt.Sprint(i)), "content", "n")
	}
	before := c.RemoteStats()
	if before.Uploads != 3 || before.Failures != 0 {
		t.Fatalf("stats before the stop: %+v", before)
	}
	s.Stop()
	for i := range 10 {
		k := Key("after", fmt.Sprint(i))
		if _, _, _, ok := lookup(c, k); ok {
			t.Fatal("hit from a stopped server")
		}
		putEntry(t, c, k, "content", "n")
		if _, _, tier, ok := lookup(c, k); !ok || tier != TierLocal {
			t.Fatalf("entry %d not stored locally", i)
		}
	}
	after := c.RemoteStats()
	if !after.Off || after.Requests-before.Requests != maxFailures || after.Failures != maxFailures {
		t.Errorf("stats after the stop: %+v; want off after %d requests", after, maxFailures)
	}
	lines := w.Lines()
	if len(lines) != 1 || !strings.Contains(lines[0], "going on without it") || !strings.Contains(lines[0], s.URL) {
		t.Errorf("warnings %q", lines)
	}
}

// faultServer answers requests with a fault, counting them: faulted are
// those it answered with the fault, last tells whether the last request
// was one.
type faultServer struct {
	*httptest.Server
	requests, faulted atomic.Int64
	last              atomic.Bool
	auth              atomic.Value // the last Authorization header
	release           chan struct{}
	once              sync.Once
	// handlers are the handlers running: Close does not wait for one
	// whose connection it hijacked (reset), which counts its fault
	// after closing the connection the client already gave up on.
	handlers sync.WaitGroup
}

// finish releases stalled handlers and waits for all of them: then the
// counts are final.
func (s *faultServer) finish() {
	s.once.Do(func() {
		close(s.release)
		s.Close()
		s.handlers.Wait()
	})
}

// A fault answers a request, or returns false to leave it to the server
// (which then stores uploads and finds nothing).
type fault func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) bool

func newFaultServer(t *testing.T, f fault) *faultServer {
	s := &faultServer{release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.handlers.Add(1)
		defer s.handlers.Done()
		s.requests.Add(1)
		s.auth.Store(r.Header.Get("Authorization"))
		if f(w, r, s.release) {
			s.faulted.Add(1)
			s.last.Store(true)
			return
		}
		s.last.Store(false)
		if r.Method == http.MethodPut {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusCreated)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(s.finish)
	return s
}

func status(code int) fault {
	return func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) bool {
		http.Error(w, "no", code)
		return true
	}
}

func reset(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) bool {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return true
	}
	conn.(*net.TCPConn).SetLinger(0)
	conn.Close()
	return true
}

func stallHeaders(w http.ResponseWriter, r *http.Request, release <-chan struct{}) bool {
	select {
	case <-release:
	case <-r.Context().Done():
	}
	return true
}

// stallBody starts a download's body and stalls it; an upload (whose
// answer has no body to speak of) stalls with its body unread, so that
// every request stalls and no answer comes late on a busy machine.
func stallBody(w http.ResponseWriter, r *http.Request, release <-chan struct{}) bool {
	partialBody(w, r)
	return stallHeaders(w, r, release)
}

// partialBody starts a download's answer of 1000 bytes with 7 of them;
// it reports false for an upload, which it leaves alone.
func partialBody(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	w.Header().Set("Content-Length", "1000")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte("partial"))
	w.(http.Flusher).Flush()
	return true
}

// truncate sends part of the body and closes the connection.
func truncate(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) bool {
	if !partialBody(w, r) {
		return false
	}
	if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
		conn.Close()
	}
	return true
}

// resetBody sends part of the body and resets the connection.
func resetBody(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) bool {
	return partialBody(w, r) && reset(w, r, nil)
}

// TestBreaker: a server that fails costs maxFailures failed requests (one
// for a refusal of the credentials) and one warning line, whatever the
// fault, lookups and uploads alike; then the tier asks nothing more.
func TestBreaker(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  fault
		faults int
		want   string
		opt    RemoteOptions
	}{
		{"500", status(500), maxFailures, "500 Internal Server Error", patient},
		{"503", status(503), maxFailures, "503", patient},
		{"401", status(401), 1, "401 Unauthorized", patient},
		{"403", status(403), 1, "403 Forbidden", patient},
		{"reset", reset, maxFailures, "GET ac/", patient},
		{"stalled headers", stallHeaders, maxFailures, "timeout awaiting response headers", stalling(300*time.Millisecond, 10*time.Second)},
		{"stalled body", stallBody, maxFailures, "no data moved for 300ms", stalling(10*time.Second, 300*time.Millisecond)},
		{"truncated body", truncate, maxFailures, "connection closed before the end of the body", patient},
		{"reset in the body", resetBody, maxFailures, "connection reset by peer", patient},
		{"redirect", status(302), maxFailures, "302", patient},
	} {
		f := newFaultServer(t, tc.fault)
		c, w := remoteCache(t, f.URL, tc.opt)
		for i := range 10 {
			k := Key(tc.name, fmt.Sprint(i))
			if _, _, _, ok := lookup(c, k); ok {
				t.Fatalf("%s: a hit", tc.name)
			}
			putEntry(t, c, k, "content", "notes")
		}
		f.finish()
		st := c.RemoteStats()
		if got := int(f.faulted.Load()); got != tc.faults || st.Failures != tc.faults || !st.Off || !f.last.Load() || int(f.requests.Load()) != st.Requests {
			t.Errorf("%s: %d of %d requests faulted, the last one %v; stats %+v; want %d faults, the last request one of them, and off",
				tc.name, got, f.requests.Load(), f.last.Load(), st, tc.faults)
		}
		lines := w.Lines()
		if len(lines) != 1 || !strings.Contains(lines[0], tc.want) || !strings.HasPrefix(lines[0], "remote cache "+f.URL+": ") {
			t.Errorf("%s: warnings %q, want one with %q", tc.name, lines, tc.want)
		}
	}
}

// TestUploadFailures: uploads that fail count as lookups that fail do.
func TestUploadFailures(t *testing.T) {
	f := newFaultServer(t, func(w http.ResponseWriter, r *http.Request, _ <-chan struct{}) bool {
		if r.Method == http.MethodGet {
			return false
		}
		io.Copy(io.Discard, r.Body)
		http.Error(w, "disk full", http.StatusInsufficientStorage)
		return true
	})
	c, w := remoteCache(t, f.URL, patient)
	for i := range 10 {
		k := Key("upload", fmt.Sprint(i))
		lookup(c, k)
		putEntry(t, c, k, "content", "notes")
	}
	st := c.RemoteStats()
	// 404s are plain misses: each entry costs a GET and a failed PUT
	// until the third failure.
	if !st.Off || st.Failures != maxFailures || st.Misses != maxFailures || st.Requests != 2*maxFailures {
		t.Errorf("stats %+v", st)
	}
	if lines := w.Lines(); len(lines) != 1 || !strings.Contains(lines[0], "PUT cas/") {
		t.Errorf("warnings %q", lines)
	}
}

// TestBreakerConcurrent: lookups from several goroutines (the batch mode
// runs four inputs at once) stop soon after the tier goes off.
func TestBreakerConcurrent(t *testing.T) {
	f := newFaultServer(t, status(500))
	c, w := remoteCache(t, f.URL, patient)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				k := Key("concurrent", fmt.Sprint(g, i))
				lookup(c, k)
				putEntry(t, c, k, "content", "notes")
			}
		}()
	}
	wg.Wait()
	f.finish()
	// Requests already sent when the third failure came back still
	// count: at most one in flight per goroutine.
	if n := int(f.requests.Load()); n < maxFailures || n > maxFailures+8 {
		t.Errorf("%d requests", n)
	}
	if lines := w.Lines(); len(lines) != 1 {
		t.Errorf("warnings %q", lines)
	}
}

// TestCredentials: the URL's user information is sent as Basic
// authentication, $BLOOP_CACHE_TOKEN's token as a bearer token, and
// neither appears in a warning, an error or the URL shown.
func TestCredentials(t *testing.T) {
	const pass, token = "s3cr3t-pa55", "t0ken-xyz"
	f := newFaultServer(t, status(401))
	u := strings.Replace(f.URL, "http://", "http://alice:"+pass+"@", 1) + "/base?sig=" + pass
	c, w := remoteCache(t, u, patient)
	lookup(c, Key("x"))
	if got := f.auth.Load(); got != "Basic "+basicAuth("alice", pass) {
		t.Errorf("Authorization %q", got)
	}
	c2, w2 := remoteCache(t, f.URL+"/base", RemoteOptions{Token: token})
	lookup(c2, Key("x"))
	if got := f.auth.Load(); got != "Bearer "+token {
		t.Errorf("Authorization %q", got)
	}
	if c.RemoteURL() != f.URL+"/base" {
		t.Errorf("RemoteURL %q", c.RemoteURL())
	}
	all := append(w.Lines(), w2.Lines()...)
	if len(all) != 2 {
		t.Errorf("warnings %q", all)
	}
	// A URL that does not parse is refused without being repeated.
	for _, bad := range []string{"http://alice:" + pass + "@host:port:x/", "ftp://alice:" + pass + "@host/", "http://alice:" + pass + "@/", "alice:" + pass + "@host"} {
		var cc Cache
		err := cc.SetRemote(RemoteOptions{URL: bad, Token: token})
		if err == nil {
			t.Errorf("%q accepted", bad)
			continue
		}
		all = append(all, err.Error())
	}
	for _, line := range all {
		for _, secret := range []string{pass, token, basicAuth("alice", pass)} {
			if strings.Contains(line, secret) {
				t.Errorf("%q shows a secret", line)
			}
		}
	}
}

// bazelRemote behaves as bazel-remote's HTTP cache does, as far as a
// client can tell: /<instance>/ac/<hash> and /<instance>/cas/<hash> only,
// a PUT needs a Content-Length, a CAS upload must hash to its name, an
// action-cache upload must parse as an ActionResult and is stored with
// the uploader's address added (execution_metadata, field 9), and a GET
// of a record whose blobs are gone is a 404.
type bazelRemote struct {
	mu   sync.Mutex
	ac   map[string][]byte
	cas  map[string][]byte
	puts int
}

var bazelPath = regexp.MustCompile("^/?(.*/)?(ac/|cas/)([a-f0-9]{64})$")

func (b *bazelRemote) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := bazelPath.FindStringSubmatch(r.URL.Path)
	if m == nil {
		http.Error(w, "resource name must be a SHA256 hash in hex", http.StatusBadRequest)
		return
	}
	kind, hash := m[2], m[3]
	b.mu.Lock()
	defer b.mu.Unlock()
	switch r.Method {
	case http.MethodPut:
		if r.ContentLength == -1 {
			http.Error(w, "PUT without Content-Length", http.StatusBadRequest)
			return
		}
		data, err := io.ReadAll(r.Body)
		if err != nil || int64(len(data)) != r.ContentLength {
			http.Error(w, "sizes don't match", http.StatusBadRequest)
			return
		}
		if kind == "cas/" {
			if sha256Hex(data) != hash {
				http.Error(w, "hash mismatch", http.StatusBadRequest)
				return
			}
			b.cas[hash] = data
		} else {
			if _, err := decodeRecord(data); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			b.ac[hash] = appendBytesField(data, 9, appendBytesField(nil, 1, []byte(r.RemoteAddr)))
		}
		b.puts++
	case http.MethodGet:
		var data []byte
		var ok bool
		if kind == "cas/" {
			data, ok = b.cas[hash]
		} else if data, ok = b.ac[hash]; ok {
			refs, _ := decodeRecord(data)
			for _, ref := range refs {
				if _, there := b.cas[ref.Hash]; ref.Size > 0 && !there {
					ok = false
				}
			}
		}
		if !ok {
			http.Error(w, "Not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		w.Write(data)
	default:
		http.Error(w, "method not supported", http.StatusMethodNotAllowed)
	}
}

// TestBazelRemoteLayout: the same client works with bazel-remote's
// checks, under an instance prefix; a record whose blobs the server
// dropped is a plain miss there.
func TestBazelRemoteLayout(t *testing.T) {
	br := &bazelRemote{ac: map[string][]byte{}, cas: map[string][]byte{}}
	srv := httptest.NewServer(br)
	defer srv.Close()
	a, wa := remoteCache(t, srv.URL+"/bloop", RemoteOptions{})
	b, wb := remoteCache(t, srv.URL+"/bloop", RemoteOptions{})
	k, k2 := Key("bazel"), Key("bazel", "2")
	putEntry(t, a, k, strings.Repeat("x", 1<<16), "notes")
	putEntry(t, a, k2, "other", "notes 2")
	if st := a.RemoteStats(); st.Uploads != 2 || br.puts != 6 {
		t.Fatalf("stats %+v, %d PUTs", st, br.puts)
	}
	if got, notes, tier, ok := lookup(b, k); !ok || tier != TierRemote || len(got) != 1<<16 || notes != "notes" {
		t.Fatalf("fetch: ok %v tier %q", ok, tier)
	}
	rec, _ := decodeRecord(br.ac[k2])
	for _, ref := range rec {
		if ref.Name == blobOut {
			delete(br.cas, ref.Hash)
		}
	}
	if _, _, _, ok := lookup(b, k2); ok {
		t.Error("a hit on a record whose output the server dropped")
	}
	if st := b.RemoteStats(); st.Hits != 1 || st.Misses != 1 || st.Bad != 0 {
		t.Errorf("stats %+v", st)
	}
	if w := append(wa.Lines(), wb.Lines()...); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
}
