// Package browsertest opens bloop's HTML pages in a real browser for
// tests: Debian's chromium, headless, driven over the DevTools protocol
// with chromedp. One browser serves a whole test binary (Close ends it);
// each page opens in its own tab, and fails its test if it asks the
// network for anything or reports an error. It lives in the module
// bloop/browser so that bloop's own go.mod holds only what bloop links.
package browsertest

import (
	"bloop/internal/testenv"
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The pages are tested in a real browser: Debian's chromium, headless,
// driven over the DevTools protocol. One browser serves the whole test
// binary; each page opens in its own tab.
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	err    error
}

// Width and Height are the browser window's size: a common laptop
// screen, which the pages' panes fill.
const (
	Width  = 1600
	Height = 1000
)

// Chromium finds a Chromium or Chrome binary, or returns "".
func Chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Need returns the browser binary. Without one the test is skipped on a
// developer's machine, and fails under CI (BLOOP_CI=1: .ci/run installs
// Debian's chromium), where a skip would hide that no page was tested.
func Need(t testing.TB) string {
	t.Helper()
	exe := Chromium()
	if exe == "" {
		testenv.Absent(t, "no chromium binary (apt-get install chromium)")
	}
	return exe

}

// Tab is one page open in the browser, with what it asked the network for
// and what it reported as errors.
type Tab struct {
	T   *testing.T
	ctx context.Context
	url string
	// Ready is the page's time to its first rendered frame, in ms from
	// the start of navigation (performance.now()).
	Ready float64

	mu       sync.Mutex
	requests []string
	errors   []string
}

// Open opens an HTML file from disk in a new tab and waits until the
// page says it has rendered (html[data-ready], set after its first
// frame). At the end of the test it requires that the page asked for
// nothing but itself and reported no error or exception.
func Open(t *testing.T, path string) *Tab {
	t.Helper()
	return open(t, path, `document.documentElement.dataset.ready`)
}

// OpenStatic opens a page without a script (an index of pages) and waits
// until it has loaded.
func OpenStatic(t *testing.T, path string) *Tab {
	t.Helper()
	return open(t, path, `document.readyState === 'complete' ? '0' : ''`)
}

func open(t *testing.T, path, readyExpr string) *Tab {
	t.Helper()
	exe := Need(t)
	browser.once.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
			chromedp.WindowSize(Width, Height), chromedp.Flag("disable-gpu", true))
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelCtx := chromedp.NewContext(alloc)
		browser.ctx = ctx
		browser.cancel = func() { cancelCtx(); cancelAlloc() }
		// The first run starts the browser, and must not carry a timeout.
		browser.err = chromedp.Do(ctx)
	})
	if browser.err != nil {
		t.Fatalf("starting %s: %v", exe, browser.err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx)
	tb := &Tab{T: t, url: "file://" + abs}
	if err := chromedp.Listen(ctx, tb.event); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		tb.check()
	})
	tctx, tcancel := context.WithTimeout(ctx, 45*time.Second)
	t.Cleanup(tcancel)
	tb.ctx = tctx
	start := time.Now()
	// The page's viewport is the whole window (a headless window's is
	// smaller by the browser's frame).
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(Width, Height), chromedp.Navigate(tb.url)); err != nil {
		t.Fatalf("opening %s: %v", tb.url, err)
	}
	ready := tb.Poll(readyExpr)
	tb.Ready, _ = strconv.ParseFloat(ready, 64)
	t.Logf("%s: first render %s ms after navigation start (%v from the test's request)", filepath.Base(path), ready, time.Since(start).Round(time.Millisecond))
	return tb
}

// event records requests and errors; it runs on chromedp's reader, so it
// only appends.
func (tb *Tab) event(ev any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		tb.requests = append(tb.requests, ev.Request.URL)
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		tb.errors = append(tb.errors, fmt.Sprintf("exception at %d:%d: %s", d.LineNumber, d.ColumnNumber, msg))
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			tb.errors = append(tb.errors, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
		}
	case *log.EventEntryAdded:
		// The browser's own reports: blocked requests (the page's
		// content security policy), failed loads.
		if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
			tb.errors = append(tb.errors, fmt.Sprintf("browser %s: %s %s", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
		}
	}
}

func (tb *Tab) check() {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, u := range tb.requests {
		if u != tb.url {
			tb.T.Errorf("the page asked for %s (only %s is allowed)", u, tb.url)
		}
	}
	if len(tb.requests) == 0 {
		tb.T.Errorf("no request seen for %s: are network events reported?", tb.url)
	}
	for _, e := range tb.errors {
		tb.T.Errorf("page error: %s", e)
	}
}

// Eval evaluates a JavaScript expression in the page into a T.
func Eval[T any](tb *Tab, expr string) T {
	tb.T.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.T.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// Poll waits until a JavaScript expression is truthy and returns it as
// text.
func (tb *Tab) Poll(expr string) string {
	tb.T.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Poll[string](`(`+expr+`) || ''`, chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil || v == "" {
		tb.T.Fatalf("waiting for %s: %v", expr, err)
	}
	return v
}

func (tb *Tab) Do(steps ...chromedp.Action[chromedp.Void]) {
	tb.T.Helper()
	if err := chromedp.Do(tb.ctx, steps...); err != nil {
		tb.T.Fatal(err)
	}
}

// Screenshot writes the visible page to name in $BLOOP_ARTIFACTS (else
// the test's temporary directory) and requires it not to be blank: more
// than a few distinct colours.
func (tb *Tab) Screenshot(name string) {
	tb.T.Helper()
	data, err := chromedp.Run(tb.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.T.Fatal(err)
	}
	dir := os.Getenv("BLOOP_ARTIFACTS")
	if dir == "" {
		dir = tb.T.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.T.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.T.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		tb.T.Fatalf("%s: %v", path, err)
	}
	colours := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r >> 8, g >> 8, bl >> 8, a >> 8}] = true
		}
	}
	tb.T.Logf("screenshot %s: %dx%d, %d colours", path, b.Dx(), b.Dy(), len(colours))
	if b.Dx() < 200 || b.Dy() < 200 || len(colours) < 16 {
		tb.T.Errorf("screenshot %s looks blank: %dx%d, %d colours", path, b.Dx(), b.Dy(), len(colours))
	}
}

// Close ends the browser, if one was started (a test binary's TestMain
// calls it after the tests).
func Close() {
	if browser.cancel != nil {
		browser.cancel()
	}
}

// AddedGlobals lists the globals a page adds to those of a blank page
// from disk.
func (tb *Tab) AddedGlobals() []string {
	t := tb.T
	t.Helper()
	empty := filepath.Join(t.TempDir(), "blank.html")
	if err := os.WriteFile(empty, []byte("<!DOCTYPE html><title>blank</title>"), 0o644); err != nil {
		t.Fatal(err)
	}
	blank, cancel := chromedp.NewContext(browser.ctx)
	defer cancel()
	bctx, bcancel := context.WithTimeout(blank, 20*time.Second)
	defer bcancel()
	if err := chromedp.Do(bctx, chromedp.Navigate("file://"+empty)); err != nil {
		t.Fatal(err)
	}
	base, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`Object.keys(window)`))
	if err != nil {
		t.Fatal(err)
	}
	var added []string
	for _, k := range Eval[[]string](tb, `Object.keys(window)`) {
		if !slices.Contains(base, k) {
			added = append(added, k)
		}
	}
	return added
}
