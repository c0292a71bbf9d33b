package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The remote tier is an HTTP server behind the local directory: a lookup
// that misses locally asks it, a hit is verified and stored locally, and
// an entry analysed here is uploaded. The layout under the base URL is
// Bazel's HTTP cache layout, which nginx's WebDAV module (PUT) and
// bazel-remote store as is:
//
//	<base>/cas/<sha256 of the blob>   the blobs: output, notes, dependency list
//	<base>/ac/<key>                   the record naming an entry's blobs (record.go)
//
// A server that fails costs little: requests have bounded waits, the
// first failure is one warning line, and after maxFailures failures (or
// one refusal of the credentials) the tier is off for the rest of the
// process.

// Environment variables of the remote tier.
const (
	URLEnvVar   = "BLOOP_CACHE_URL"   // the remote cache when --cache-url is absent
	TokenEnvVar = "BLOOP_CACHE_TOKEN" // a bearer token for it
)

// Default waits; RemoteOptions may shorten them (tests).
const (
	defaultDialTimeout   = 2 * time.Second
	defaultHeaderTimeout = 3 * time.Second
	defaultIdleTimeout   = 3 * time.Second
	maxFailures          = 3
	// maxSmallBlob bounds the record, notes and dependency list, which are
	// read into memory.
	maxSmallBlob = 16 << 20
)

// The blobs of an entry, by their path in the record.
const (
	blobOut   = "out"
	blobNotes = "notes"
	blobDeps  = "deps"
)

// emptyHash is the SHA-256 of no bytes: an empty blob is never uploaded
// nor fetched.
const emptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// RemoteOptions configure the remote tier.
type RemoteOptions struct {
	// URL is the base URL, http or https. User information in it
	// (https://user:password@host/path) is sent as HTTP Basic
	// authentication and never shown.
	URL string
	// Token, when set and the URL has no user information, is sent as
	// "Authorization: Bearer <token>" ($BLOOP_CACHE_TOKEN).
	Token string
	// ReadOnly fetches entries but never uploads.
	ReadOnly bool
	// Warn receives the tier's warning lines, without a prefix; nil prints
	// "bloop: warning: <line>" on stderr.
	Warn func(line string)
	// DialTimeout bounds a connection's setup, HeaderTimeout the wait for
	// a response's headers, IdleTimeout a body that stops moving (in
	// either direction). Zero means 2, 3 and 3 seconds.
	DialTimeout, HeaderTimeout, IdleTimeout time.Duration
}

// RemoteStats count what the remote tier did in this process.
type RemoteStats struct {
	Hits     int // entries fetched (verified and stored locally)
	Misses   int // lookups that found no usable entry (404, stale dependencies)
	Bad      int // entries refused: a record or blob that does not verify
	Uploads  int // entries uploaded whole
	Requests int // HTTP requests sent (or attempted)
	Failures int // requests that failed: no connection, reset, timeout, 401/403, 5xx
	Off      bool
}

type remote struct {
	base     *url.URL // without user information
	shown    string   // scheme://host/path: what messages name
	auth     string   // the Authorization header, "" for none
	secrets  []string // never to be printed
	readOnly bool
	client   *http.Client
	idle     time.Duration
	warn     func(string)

	off                                      atomic.Bool
	hits, misses, bad, uploads, requests, fl atomic.Int64

	mu       sync.Mutex
	failures int
	warned   bool
	reported map[string]bool // keys whose bad entry was reported
}

// SetRemote puts the remote tier of opt behind c's directory. The URL's
// user information and opt.Token appear in no error or message.
func (c *Cache) SetRemote(opt RemoteOptions) error {
	r, err := newRemote(opt)
	if err != nil {
		return err
	}
	c.remote = r
	return nil
}

// RemoteURL is the remote tier's base URL without credentials or query,
// "" when there is none: the spelling to print or record.
func (c *Cache) RemoteURL() string {
	if c == nil || c.remote == nil {
		return ""
	}
	return c.remote.shown
}

// RemoteStats tells what the remote tier did so far.
func (c *Cache) RemoteStats() RemoteStats {
	if c == nil || c.remote == nil {
		return RemoteStats{}
	}
	r := c.remote
	return RemoteStats{
		Hits: int(r.hits.Load()), Misses: int(r.misses.Load()), Bad: int(r.bad.Load()),
		Uploads: int(r.uploads.Load()), Requests: int(r.requests.Load()),
		Failures: int(r.fl.Load()), Off: r.off.Load(),
	}
}

func newRemote(opt RemoteOptions) (*remote, error) {
	u, err := url.Parse(opt.URL)
	if err != nil {
		// url.Parse's error repeats the URL, credentials included.
		return nil, errors.New("remote cache URL does not parse (not shown, as it may hold credentials): want an http or https URL such as http://host:port/path")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("remote cache URL %q: want an http or https URL such as http://host:port/path", shownURL(u))
	}
	r := &remote{readOnly: opt.ReadOnly, warn: opt.Warn, reported: map[string]bool{}}
	if u.User != nil {
		user := u.User.Username()
		pass, _ := u.User.Password()
		r.auth = "Basic " + basicAuth(user, pass)
		r.secrets = append(r.secrets, pass, url.QueryEscape(pass), url.PathEscape(pass))
		u.User = nil
	} else if opt.Token != "" {
		r.auth = "Bearer " + opt.Token
		r.secrets = append(r.secrets, opt.Token)
	}
	if r.auth != "" {
		r.secrets = append(r.secrets, r.auth, strings.Fields(r.auth)[1])
	}
	if u.RawQuery != "" {
		// A query may hold a signature; it is sent, never shown.
		r.secrets = append(r.secrets, u.RawQuery)
	}
	u.Fragment, u.RawFragment = "", ""
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	r.base = u
	r.shown = shownURL(u)
	if r.warn == nil {
		r.warn = func(line string) { fmt.Fprintf(os.Stderr, "bloop: warning: %s\n", line) }
	}
	dial := orDefault(opt.DialTimeout, defaultDialTimeout)
	header := orDefault(opt.HeaderTimeout, defaultHeaderTimeout)
	r.idle = orDefault(opt.IdleTimeout, defaultIdleTimeout)
	r.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: dial, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   header,
			ResponseHeaderTimeout: header,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       30 * time.Second,
			// Blobs are compared byte for byte with their hash: no
			// transparent decompression.
			DisableCompression: true,
		},
		// A cache server does not redirect; following one could send the
		// credentials elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return r, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func basicAuth(user, pass string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
}

// shownURL is u without user information, query or fragment: the
// spelling messages use.
func shownURL(u *url.URL) string {
	s := u.Scheme + "://" + u.Host + u.EscapedPath()
	if u.Opaque != "" || u.Host == "" && u.Path == "" {
		s = u.Scheme + ":"
	}
	return s
}

// scrub removes the secrets from a message, whatever produced it.
func (r *remote) scrub(s string) string {
	for _, x := range r.secrets {
		if x != "" {
			s = strings.ReplaceAll(s, x, "***")
		}
	}
	return s
}

// fail records a failed request: the first failure of the process is
// one warning line, and the tier goes off after maxFailures of them, or
// at once when the server refuses the credentials.
func (r *remote) fail(what string, refused bool) {
	r.fl.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures++
	if !r.warned {
		r.warned = true
		r.warn(r.scrub(fmt.Sprintf("remote cache %s: %s; going on without it", r.shown, what)))
	}
	if refused || r.failures >= maxFailures {
		r.off.Store(true)
	}
}

// reject reports an entry that does not verify, once per key: it is a
// miss, and what was fetched is never used.
func (r *remote) reject(key, format string, args ...any) {
	r.bad.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reported[key] {
		return
	}
	r.reported[key] = true
	r.warn(r.scrub(fmt.Sprintf("remote cache %s: entry %s: %s; not used", r.shown, key, fmt.Sprintf(format, args...))))
}

// errMissing is a 404: no such entry or blob.
var errMissing = errors.New("not found")

// errFailed marks an error already counted by fail.
var errFailed = errors.New("remote request failed")

// do sends one request and returns its body, wrapped so that a body that
// stops moving for r.idle ends the request. Statuses other than 2xx are
// errors: errMissing for 404, errFailed (counted) for the rest. The caller
// closes the body.
func (r *remote) do(method, rel string, body io.Reader, size int64) (io.ReadCloser, error) {
	if r.off.Load() {
		return nil, errFailed
	}
	r.requests.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	dog := &watchdog{d: r.idle, cancel: cancel}
	u := *r.base
	u.Path = r.base.Path + "/" + rel
	if body != nil {
		body = dog.reader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		cancel()
		r.fail(fmt.Sprintf("%s %s: %v", method, rel, err), false)
		return nil, errFailed
	}
	if body != nil {
		req.ContentLength = size
		if size == 0 {
			req.Body = http.NoBody
		}
	}
	if r.auth != "" {
		req.Header.Set("Authorization", r.auth)
	}
	req.Header.Set("User-Agent", "bloop")
	resp, err := r.client.Do(req)
	if err != nil {
		dog.stop()
		cancel()
		r.fail(fmt.Sprintf("%s %s: %s", method, rel, dog.explain(err)), false)
		return nil, errFailed
	}
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return &idleBody{ReadCloser: dog.readCloser(resp.Body), dog: dog, cancel: cancel}, nil
	case code == http.StatusNotFound && method == http.MethodGet:
		drain(resp.Body)
		dog.stop()
		cancel()
		return nil, errMissing
	default:
		drain(resp.Body)
		dog.stop()
		cancel()
		refused := code == http.StatusUnauthorized || code == http.StatusForbidden
		r.fail(fmt.Sprintf("%s %s: %s", method, rel, resp.Status), refused)
		return nil, errFailed
	}
}

// drain reads a little of an error response so the connection can be
// reused, then closes it.
func drain(b io.ReadCloser) {
	io.Copy(io.Discard, io.LimitReader(b, 4096))
	b.Close()
}

// get copies the body of rel to w, reading at most limit+1 bytes: found
// is false for a 404; an error is a failure already counted.
func (r *remote) get(rel string, w io.Writer, limit int64) (found bool, err error) {
	body, err := r.do(http.MethodGet, rel, nil, 0)
	if errors.Is(err, errMissing) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer body.Close()
	if _, err := io.Copy(w, io.LimitReader(body, limit+1)); err != nil {
		r.fail(fmt.Sprintf("GET %s: %s", rel, body.(*idleBody).dog.explain(err)), false)
		return false, errFailed
	}
	return true, nil
}

// put uploads size bytes of body to rel.
func (r *remote) put(rel string, body io.Reader, size int64) error {
	resp, err := r.do(http.MethodPut, rel, body, size)
	if err != nil {
		return err
	}
	drain(resp)
	return nil
}

// watchdog cancels a request when its body, either way, moves no byte
// for d. It runs from the first read.
type watchdog struct {
	d      time.Duration
	cancel context.CancelFunc
	mu     sync.Mutex
	t      *time.Timer
	fired  atomic.Bool
}

func (w *watchdog) kick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.t == nil {
		w.t = time.AfterFunc(w.d, func() {
			w.fired.Store(true)
			w.cancel()
		})
		return
	}
	w.t.Reset(w.d)
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.t != nil {
		w.t.Stop()
	}
}

// explain turns a transport error into words without the request's URL
// (which holds the query).
func (w *watchdog) explain(err error) string {
	if w.fired.Load() {
		return fmt.Sprintf("no data moved for %v", w.d)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "connection closed before the end of the body"
	}
	return err.Error()
}

type watchedReader struct {
	r   io.Reader
	dog *watchdog
}

func (w *watchdog) reader(r io.Reader) io.Reader { return &watchedReader{r, w} }

func (w *watchdog) readCloser(rc io.ReadCloser) io.ReadCloser {
	w.kick()
	return struct {
		io.Reader
		io.Closer
	}{&watchedReader{rc, w}, rc}
}

func (wr *watchedReader) Read(p []byte) (int, error) {
	wr.dog.kick()
	n, err := wr.r.Read(p)
	if n > 0 {
		wr.dog.kick()
	}
	return n, err
}

// idleBody is a response body whose close also ends its watchdog.
type idleBody struct {
	io.ReadCloser
	dog    *watchdog
	cancel context.CancelFunc
}

func (b *idleBody) Close() error {
	err := b.ReadCloser.Close()
	b.dog.stop()
	b.cancel()
	return err
}

// fetch looks key up on the server. A record and blobs that verify are
// stored as a local entry, which is returned open; anything else is nil.
func (c *Cache) fetch(key string) *Hit {
	r := c.remote
	if r == nil || r.off.Load() {
		return nil
	}
	var rec bytes.Buffer
	found, err := r.get("ac/"+key, &rec, maxSmallBlob)
	if err != nil {
		return nil
	}
	if !found {
		r.misses.Add(1)
		return nil
	}
	if rec.Len() > maxSmallBlob {
		r.reject(key, "record larger than %d bytes", maxSmallBlob)
		return nil
	}
	refs, err := decodeRecord(rec.Bytes())
	if err != nil {
		r.reject(key, "record does not parse: %v", err)
		return nil
	}
	byName := map[string]blobRef{}
	for _, ref := range refs {
		byName[ref.Name] = ref
	}
	for _, n := range []string{blobOut, blobNotes, blobDeps} {
		if _, ok := byName[n]; !ok {
			r.reject(key, "record names no %q blob", n)
			return nil
		}
	}
	// The dependency list first: when the files it names differ here,
	// the output is not worth downloading.
	var deps, notes bytes.Buffer
	if !r.blob(key, byName[blobDeps], &deps) {
		return nil
	}
	if !c.depsText(deps.String()) {
		r.misses.Add(1)
		return nil
	}
	if !r.blob(key, byName[blobNotes], &notes) {
		return nil
	}
	e, err := c.Create(key)
	if err != nil {
		return nil
	}
	if !r.blob(key, byName[blobOut], e.tmp) {
		e.Abort()
		return nil
	}
	e.deps = splitLines(deps.String())
	e.notes = notes.Bytes()
	if err := e.commit(false); err != nil {
		e.Abort()
		return nil
	}
	f := c.Get(key)
	if f == nil {
		return nil
	}
	r.hits.Add(1)
	return &Hit{File: f, Notes: e.notes, Tier: TierRemote}
}

// blob downloads ref into w and reports whether it verified: its size
// and SHA-256 are the record's. What w got is not to be used otherwise.
func (r *remote) blob(key string, ref blobRef, w io.Writer) bool {
	if ref.Size == 0 {
		if ref.Hash != emptyHash {
			r.reject(key, "blob %s %s has size 0", ref.Name, ref.Hash)
			return false
		}
		return true
	}
	limit := ref.Size
	if ref.Name != blobOut && limit > maxSmallBlob {
		r.reject(key, "blob %s %s: %d bytes is too large", ref.Name, ref.Hash, ref.Size)
		return false
	}
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(w, h)}
	found, err := r.get("cas/"+ref.Hash, cw, limit)
	switch {
	case err != nil:
		return false
	case !found:
		r.reject(key, "blob %s %s is missing", ref.Name, ref.Hash)
		return false
	case cw.n != ref.Size:
		r.reject(key, "blob %s %s: %d bytes, the record says %d", ref.Name, ref.Hash, cw.n, ref.Size)
		return false
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != ref.Hash {
		r.reject(key, "blob %s %s: its content hashes to %s", ref.Name, ref.Hash, got)
		return false
	}
	return true
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// upload sends a committed entry: its blobs, then the record, so that a
// reader never finds a record whose blobs are not there yet.
func (c *Cache) upload(key, outPath string, outRef blobRef, notes, deps []byte) {
	r := c.remote
	if r == nil || r.readOnly || r.off.Load() {
		return
	}
	notesRef := blobRef{Name: blobNotes, Hash: sha256Hex(notes), Size: int64(len(notes))}
	depsRef := blobRef{Name: blobDeps, Hash: sha256Hex(deps), Size: int64(len(deps))}
	for _, b := range []struct {
		ref  blobRef
		data []byte
	}{{depsRef, deps}, {notesRef, notes}} {
		if b.ref.Size > 0 && r.put("cas/"+b.ref.Hash, bytes.NewReader(b.data), b.ref.Size) != nil {
			return
		}
	}
	if outRef.Size > 0 {
		f, err := os.Open(outPath)
		if err != nil {
			return
		}
		err = r.put("cas/"+outRef.Hash, f, outRef.Size)
		f.Close()
		if err != nil {
			return
		}
	}
	rec := encodeRecord([]blobRef{outRef, notesRef, depsRef})
	if r.put("ac/"+key, bytes.NewReader(rec), int64(len(rec))) == nil {
		r.uploads.Add(1)
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func splitLines(s string) []string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
