// Package debuginfod fetches an ELF file's debug file, the file itself or
// one of its source files by build-id from the debuginfod servers of
// $DEBUGINFOD_URLS, as elfutils' client (libdebuginfod, debuginfod-find)
// does, and keeps them in the client cache that gdb, perf and elfutils'
// tools share ($DEBUGINFOD_CACHE_PATH, else ~/.cache/debuginfod_client),
// in its layout, so that what any of them fetched serves the others.
//
// Unlike libdebuginfod, a Client lives for one bloop run and bounds what
// a failing server costs in it: the first failure of a server (refused,
// timed out, an error status, a wrong or truncated answer) is one warning
// and the server is not asked again in the run.
package debuginfod

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kinds of file a server serves for a build-id (the URL's last parts and
// the cache entry's name).
const (
	KindDebuginfo  = "debuginfo"
	KindExecutable = "executable"
	KindSource     = "source"
)

// Environment variables elfutils' client reads, which this one reads too.
const (
	EnvURLs      = "DEBUGINFOD_URLS"
	EnvCachePath = "DEBUGINFOD_CACHE_PATH"
	EnvTimeout   = "DEBUGINFOD_TIMEOUT"
	EnvMaxSize   = "DEBUGINFOD_MAXSIZE"
	EnvMaxTime   = "DEBUGINFOD_MAXTIME"
	EnvVerbose   = "DEBUGINFOD_VERBOSE"
)

// DefaultTimeout is elfutils' $DEBUGINFOD_TIMEOUT default.
const DefaultTimeout = 90 * time.Second

// ErrNotFound is a miss: no server has the file, or none could be asked.
var ErrNotFound = errors.New("not found on any debuginfod server")

// Options configure a Client; FromEnv reads them as elfutils does.
type Options struct {
	// URLs are the servers, in $DEBUGINFOD_URLS's order.
	URLs []string
	// CachePath is the client cache's root.
	CachePath string
	// Timeout bounds connecting (up to maxConnect) and waiting for the
	// answer's head, and a download slower than 100 KiB per Timeout
	// fails (curl's low-speed limit, which elfutils sets); <= 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// MaxSize refuses answers larger than it (bytes); 0: no limit.
	MaxSize int64
	// MaxTime bounds one download's whole time; 0: no limit.
	MaxTime time.Duration
	// Verbose, when set, gets a line per request and its outcome.
	Verbose io.Writer
	// Warn is told each problem once, on one line (no credentials).
	Warn func(msg string)
	// Transport carries the requests; nil: a transport of its own.
	Transport http.RoundTripper
}

// FromEnv reads the options from the environment. ok is false when
// $DEBUGINFOD_URLS is empty or unset: debuginfod is off.
func FromEnv() (opt Options, ok bool) {
	opt.URLs = strings.Fields(os.Getenv(EnvURLs))
	if len(opt.URLs) == 0 {
		return opt, false
	}
	opt.CachePath = DefaultCachePath()
	opt.Timeout = DefaultTimeout
	// elfutils reads these with atoi/atol: a bad value is 0.
	if s := os.Getenv(EnvTimeout); s != "" {
		n, _ := strconv.Atoi(strings.TrimSpace(s))
		opt.Timeout = time.Duration(n) * time.Second
	}
	if s := os.Getenv(EnvMaxSize); s != "" {
		opt.MaxSize, _ = strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	}
	if s := os.Getenv(EnvMaxTime); s != "" {
		n, _ := strconv.Atoi(strings.TrimSpace(s))
		opt.MaxTime = time.Duration(n) * time.Second
	}
	if os.Getenv(EnvVerbose) != "" {
		opt.Verbose = os.Stderr
	}
	return opt, true
}

// Client fetches files by build-id. Its methods may be called from many
// goroutines; each file is fetched once per Client (the answer, a miss
// too, is remembered for the Client's life: one run).
type Client struct {
	opt     Options
	http    *http.Client
	servers []*server

	mu        sync.Mutex
	calls     map[string]*call
	cacheOnce sync.Once  // the warning of an unusable cache
	verboseMu sync.Mutex // requests log from several goroutines
}

// call is one file's fetch, which every goroutine asking for it waits on.
type call struct {
	done chan struct{}
	path string
	err  error
}

// New returns a client of the servers opt names; nil when it names none,
// whose methods all miss.
func New(opt Options) *Client {
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.Warn == nil {
		opt.Warn = func(string) {}
	}
	c := &Client{opt: opt, calls: map[string]*call{}}
	seen := map[string]bool{}
	for _, u := range opt.URLs {
		s, err := newServer(u)
		if err != nil {
			opt.Warn(err.Error())
			continue
		}
		// elfutils asks a server named twice once.
		if !seen[s.base] {
			seen[s.base] = true
			c.servers = append(c.servers, s)
		}
	}
	if len(c.servers) == 0 {
		return nil
	}
	c.http = &http.Client{Transport: opt.Transport}
	if c.http.Transport == nil {
		c.http.Transport = newTransport(opt.Timeout)
	}
	return c
}

// Debuginfo returns the path of the debug file of the ELF file whose
// build-id is id, fetched or from the cache.
func (c *Client) Debuginfo(id []byte) (string, error) { return c.find(KindDebuginfo, id, "") }

// Executable returns the path of the ELF file whose build-id is id.
func (c *Client) Executable(id []byte) (string, error) { return c.find(KindExecutable, id, "") }

// Source returns the path of a copy of the source file path (absolute,
// as the DWARF names it) of the ELF file whose build-id is id.
func (c *Client) Source(id []byte, path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("debuginfod: empty source path")
	}
	return c.find(KindSource, id, path)
}

// find fetches a file once for all goroutines of the run.
func (c *Client) find(kind string, id []byte, src string) (string, error) {
	if c == nil {
		return "", ErrNotFound
	}
	if len(id) == 0 || len(id) > 64 {
		return "", fmt.Errorf("debuginfod: bad build-id length %d", len(id))
	}
	hexID := hex.EncodeToString(id)
	key := kind + "/" + hexID + "/" + src
	c.mu.Lock()
	if k, ok := c.calls[key]; ok {
		c.mu.Unlock()
		<-k.done
		return k.path, k.err
	}
	k := &call{done: make(chan struct{})}
	c.calls[key] = k
	c.mu.Unlock()
	k.path, k.err = c.fetch(entry{root: c.opt.CachePath, id: hexID, raw: id, kind: kind, source: src})
	close(k.done)
	return k.path, k.err
}

// verbosef writes a line to the verbose writer, when there is one.
func (c *Client) verbosef(format string, args ...any) {
	if c.opt.Verbose != nil {
		c.verboseMu.Lock()
		fmt.Fprintf(c.opt.Verbose, "debuginfod: "+format+"\n", args...)
		c.verboseMu.Unlock()
	}
}

// server is one of $DEBUGINFOD_URLS, with its circuit breaker.
type server struct {
	base string // URL up to and with /buildid, credentials included
	name string // what messages call it: no credentials, no path
	mu   sync.Mutex
	down bool
	// stop is closed when the server is found failing, which aborts
	// the requests still running on it.
	stop chan struct{}
}

func newServer(raw string) (*server, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("debuginfod: ignoring %q in $%s: not an http or https URL", redact(raw), EnvURLs)
	}
	// Tolerate http://host:999 and http://host:999/, as elfutils does.
	base := raw + "/buildid"
	if strings.HasSuffix(raw, "/") {
		base = raw + "buildid"
	}
	return &server{base: base, name: u.Scheme + "://" + u.Host, stop: make(chan struct{})}, nil
}

// fail trips the breaker: true for the first failure, which the caller
// reports.
func (s *server) fail() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return false
	}
	s.down = true
	close(s.stop)
	return true
}

func (s *server) isDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down
}

// redact removes the user information from what looks like a URL.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		u.User = nil
		return u.String()
	}
	if i := strings.Index(raw, "@"); i >= 0 {
		if j := strings.Index(raw, "://"); j >= 0 && j < i {
			return raw[:j+3] + raw[i+1:]
		}
		return raw[i+1:]
	}
	return raw
}
