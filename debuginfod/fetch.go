package debuginfod

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"bloop/atomicfile"
)

// lowSpeedLimit is curl's CURLOPT_LOW_SPEED_LIMIT as elfutils sets it: a
// download that gets fewer bytes than this in a $DEBUGINFOD_TIMEOUT has
// stalled.
const lowSpeedLimit = 100 << 10

// maxConnect bounds connecting to a server whatever $DEBUGINFOD_TIMEOUT
// says: an unreachable server (packets dropped) then costs a whole run
// this once, not elfutils' 90 s; a server that answers still has the
// timeout to send its answer's head (a first request for a file in a
// package archive can take a while).
const maxConnect = 4 * time.Second

func newTransport(timeout time.Duration) *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: min(timeout, maxConnect), KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
}

// outcome is one server's answer to one request.
type outcome struct {
	s        *server
	tmp      string // the downloaded file, verified: the caller renames or removes it
	notFound bool   // 404: the server does not have it
	tooBig   bool   // over MaxSize: not the server's failure
	err      error  // a failure of the server (or of its answer)
}

// fetch answers from the cache, else asks every server still up at once
// and takes the first good answer, as elfutils asks its servers in
// parallel; the others are then cancelled. A file reaches its cache name
// only whole and checked (a temporary name in its directory, renamed),
// so a process killed midway or one racing it leaves no partial entry.
func (c *Client) fetch(e entry) (string, error) {
	switch e.lookup() {
	case hit:
		if err := verify(e.path(), e); err == nil {
			c.verbosef("%s %s: from the cache %s", e.kind, e.id, e.path())
			return e.path(), nil
		} else {
			// Not ours to remove: it may be another client's. Ask again.
			c.opt.Warn(fmt.Sprintf("debuginfod: ignoring cache entry %s: %v", e.path(), err))
		}
	case negative:
		c.verbosef("%s %s: a recent miss in the cache", e.kind, e.id)
		return "", ErrNotFound
	}
	var live []*server
	for _, s := range c.servers {
		if !s.isDown() {
			live = append(live, s)
		}
	}
	if len(live) == 0 {
		return "", ErrNotFound
	}
	err := initCache(e.root)
	if err == nil {
		err = os.MkdirAll(e.dir(), 0o700)
	}
	if err != nil {
		// Without a cache nothing can be fetched: said once a run.
		err = fmt.Errorf("debuginfod: cache %s: %w", e.root, err)
		c.cacheOnce.Do(func() { c.opt.Warn(err.Error() + "; fetching nothing") })
		return "", err
	}
	// Another process may have fetched it while this one waited, for
	// about what its failing would take.
	defer lockDir(e.dir(), c.opt.Timeout+maxConnect)()
	switch e.lookup() {
	case hit:
		if verify(e.path(), e) == nil {
			return e.path(), nil
		}
	case negative:
		return "", ErrNotFound
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	results := make(chan outcome, len(live))
	var wg sync.WaitGroup
	for _, s := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- c.ask(ctx, s, e)
		}()
	}
	go func() { wg.Wait(); close(results) }()
	won, notFound := "", 0
	for o := range results {
		switch {
		case o.tmp != "" && won == "":
			err := os.Rename(o.tmp, e.path())
			atomicfile.Done(o.tmp)
			if err != nil {
				discard(o.tmp)
				c.opt.Warn(fmt.Sprintf("debuginfod: cannot store %s: %v", e.path(), err))
				continue
			}
			won = e.path()
			cancel() // the others' answers are not needed
		case o.tmp != "":
			discard(o.tmp)
		case o.notFound:
			notFound++
		case o.tooBig:
			c.verbosef("%s %s: %s: larger than $%s", e.kind, e.id, o.s.name, EnvMaxSize)
		case o.err != nil && won == "" && !errors.Is(o.err, context.Canceled):
			if o.s.fail() {
				c.opt.Warn(fmt.Sprintf("debuginfod server %s: %v; not asking it again in this run", o.s.name, o.err))
			}
		}
	}
	if won != "" {
		return won, nil
	}
	if notFound == len(c.servers) {
		// Every server said it has no such file: remembered for
		// cache_miss_s, as elfutils does. Not when one failed (in
		// this request or before in the run): it may have it.
		e.remember()
	}
	return "", ErrNotFound
}

// ask requests the file from one server and downloads it to a temporary
// file beside its cache name, which it checks.
func (c *Client) ask(parent context.Context, s *server, e entry) (o outcome) {
	o.s = s
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	if c.opt.MaxTime > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, c.opt.MaxTime)
		defer stop()
	}
	// A tripped breaker aborts this request too.
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	u := s.base + e.urlPath()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		o.err = err
		return o
	}
	req.Header.Set("User-Agent", "bloop (debuginfod client)")
	if c.opt.MaxSize > 0 {
		req.Header.Set("X-DEBUGINFOD-MAXSIZE", fmt.Sprint(c.opt.MaxSize))
	}
	c.verbosef("GET %s", redact(u))
	resp, err := c.http.Do(req)
	if err != nil {
		o.err = netError(ctx, err, c.opt)
		return o
	}
	defer resp.Body.Close()
	c.verbosef("%s: %s", redact(u), resp.Status)
	switch {
	case resp.StatusCode == http.StatusNotFound:
		o.notFound = true
		return o
	case resp.StatusCode != http.StatusOK:
		o.err = fmt.Errorf("%s", resp.Status)
		return o
	}
	size := resp.ContentLength
	if size < 0 {
		// Behind a compressing proxy, the size is only in the server's
		// own header.
		if n, ok := parseSize(resp.Header.Get("X-Debuginfod-Size")); ok {
			size = n
		}
	}
	if c.opt.MaxSize > 0 && size > c.opt.MaxSize {
		o.tooBig = true
		return o
	}
	// Removed if the run is interrupted (bloop struct handles signals).
	f, err := atomicfile.CreateTemp(e.dir(), filepath.Base(e.path())+".*")
	if err != nil {
		o.err = err
		return o
	}
	tmp := f.Name()
	var body io.Reader = resp.Body
	if c.opt.MaxSize > 0 {
		body = io.LimitReader(body, c.opt.MaxSize+1) // an unsized answer stops past the limit
	}
	n, err := c.copyBody(ctx, cancel, f, body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("truncated answer: %d bytes, then the connection ended", n)
	}
	if err == nil && size >= 0 && n != size {
		err = fmt.Errorf("truncated answer: %d of %d bytes", n, size)
	}
	if err == nil && c.opt.MaxSize > 0 && n > c.opt.MaxSize {
		discard(tmp)
		o.tooBig = true
		return o
	}
	if err == nil {
		err = verify(tmp, e)
	}
	if err != nil {
		discard(tmp)
		o.err = netError(ctx, err, c.opt)
		return o
	}
	os.Chmod(tmp, 0o444)
	o.tmp = tmp
	return o
}

// discard removes a temporary file that will not be an entry.
func discard(tmp string) {
	os.Remove(tmp)
	atomicfile.Done(tmp)
}

// copyBody copies the answer to w, cancelling it when fewer than
// lowSpeedLimit bytes came in a timeout.
func (c *Client) copyBody(ctx context.Context, cancel context.CancelFunc, w io.Writer, r io.Reader) (int64, error) {
	var mu sync.Mutex
	var n, last int64
	stalled := false
	tick := time.NewTicker(c.opt.Timeout)
	defer tick.Stop()
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-tick.C:
				mu.Lock()
				slow := n-last < lowSpeedLimit
				last = n
				stalled = stalled || slow
				mu.Unlock()
				if slow {
					cancel()
					return
				}
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		k, err := r.Read(buf)
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				return n, werr
			}
			mu.Lock()
			n += int64(k)
			mu.Unlock()
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			mu.Lock()
			s := stalled
			mu.Unlock()
			if s {
				return n, fmt.Errorf("download stalled (under %d KiB in %v, $%s)", lowSpeedLimit>>10, c.opt.Timeout, EnvTimeout)
			}
			return n, err
		}
	}
}

// netError says why a request failed without the URL, which may hold
// credentials (url.Error's message has the whole URL).
func netError(ctx context.Context, err error, opt Options) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("download took longer than $%s (%v)", EnvMaxTime, opt.MaxTime)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("no answer within $%s (%v): %w", EnvTimeout, opt.Timeout, err)
	}
	return err
}
