// Package progress shows a one-line progress report on a terminal for
// runs that take more than about a second: the phase, and the work done
// out of the total when it is known. Nothing is written when the stream
// is not a terminal, so logs and pipelines stay clean.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Delay is how long a run goes before progress is shown: shorter runs
// would only flicker.
var Delay = time.Second

// refresh is how often the line is redrawn.
const refresh = 200 * time.Millisecond

// Bar is one progress line. A nil *Bar shows nothing; its methods may be
// called from any goroutine.
type Bar struct {
	w     io.Writer
	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup

	mu          sync.Mutex
	prefix      string
	phase       string
	done, total int
	drawn       bool
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// New starts a progress line on w, labelled prefix; it returns nil (no
// progress) unless enabled.
func New(w io.Writer, prefix string, enabled bool) *Bar {
	if !enabled {
		return nil
	}
	b := &Bar{w: w, prefix: prefix, start: time.Now(), stop: make(chan struct{})}
	b.wg.Add(1)
	go b.loop()
	return b
}

// Start opens a terminal progress line on stderr when stderr is one and
// quiet is false.
func Start(prefix string, quiet bool) *Bar {
	return New(os.Stderr, prefix, !quiet && IsTerminal(os.Stderr))
}

func (b *Bar) loop() {
	defer b.wg.Done()
	t := time.NewTicker(refresh)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			if time.Since(b.start) >= Delay {
				b.draw()
			}
		}
	}
}

// Phase names what is being done now; total is the amount of work in it,
// 0 when unknown.
func (b *Bar) Phase(name string, total int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.phase, b.done, b.total = name, 0, total
	b.mu.Unlock()
}

// Set records the work done in the current phase.
func (b *Bar) Set(done, total int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.done, b.total = done, total
	b.mu.Unlock()
}

// SetPrefix changes the label, e.g. to the module being analysed.
func (b *Bar) SetPrefix(p string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.prefix = p
	b.mu.Unlock()
}

func (b *Bar) draw() {
	b.mu.Lock()
	defer b.mu.Unlock()
	line := fmt.Sprintf("%s: %s", b.prefix, b.phase)
	if b.total > 0 {
		line += fmt.Sprintf(" %d/%d (%d%%)", b.done, b.total, 100*b.done/b.total)
	}
	line += fmt.Sprintf(" %.0fs", time.Since(b.start).Seconds())
	// \r and erase-line: the line is rewritten in place.
	fmt.Fprintf(b.w, "\r\033[K%s", line)
	b.drawn = true
}

// Close stops the line and erases it, leaving the terminal as it was.
func (b *Bar) Close() {
	if b == nil {
		return
	}
	close(b.stop)
	b.wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprint(b.w, "\r\033[K")
	}
}
