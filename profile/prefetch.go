package profile

import (
	"bytes"
	"strings"
)

// A report's first pass over a perf.data file (the skim) takes the
// mappings, and only then are the modules opened: their symbols,
// sections and unwinding tables read, 13 to 27 ms after a 30 ms pass on
// a frame-pointer file of a C++ program (libstdc++ alone 8 to 15 ms).
// The skim leaves the second core idle: a goroutine opens each module
// there as its first mapping is read, and module takes what it opened
// when the build-id it was opened for is still the one recorded (perf's
// header may name another than an MMAP2 record did).

// prefetchQueue bounds the modules waiting to be opened: past it, the
// rest are opened as before, after the pass.
const prefetchQueue = 256

// openers are the goroutines opening modules ahead.
const openers = 2

// opening is a module opened, or being opened, ahead.
type opening struct {
	want     []byte
	recorded bool
	done     chan struct{}
	m        *Module
	warn     string
}

// prefetch starts opening the module at path ahead, as module would
// with the build-id recorded so far (else meta's).
func (s *space) prefetch(path string, meta map[string][]byte) {
	if path == "" || strings.HasPrefix(path, "[") || s.ahead[path] != nil || s.mods[path] != nil {
		return
	}
	if _, ok := s.blobs[path]; ok {
		return // a stored image is written to a file: opened after the pass
	}
	want, recorded := meta[path]
	if !recorded {
		want, recorded = s.buildIDs[path]
	}
	o := &opening{want: want, recorded: recorded, done: make(chan struct{})}
	if s.ahead == nil {
		s.ahead = map[string]*opening{}
	}
	if s.opens == nil {
		s.opens = make(chan func(), prefetchQueue)
		for range openers {
			go func(opens <-chan func()) { // not s.opens: endPrefetch clears it
				for open := range opens {
					open()
				}
			}(s.opens)
		}
	}
	select {
	case s.opens <- func() {
		defer close(o.done)
		o.m, o.warn = s.open(path, o.want, o.recorded)
	}:
		s.ahead[path] = o
	default:
	}
}

// endPrefetch ends the opening goroutine once it has opened what it was
// given.
func (s *space) endPrefetch() {
	if s.opens != nil {
		close(s.opens)
		s.opens = nil
	}
}

// prefetched is the module at path opened ahead for build-id want if
// recorded, nil when it was not (or for another build-id).
func (s *space) prefetched(path string, want []byte, recorded bool) (*Module, string) {
	o := s.ahead[path]
	if o == nil {
		return nil, ""
	}
	delete(s.ahead, path)
	<-o.done
	if o.recorded != recorded || !bytes.Equal(o.want, want) {
		return nil, "" // opened for nothing (rare): its file stays mapped until the report ends
	}
	return o.m, o.warn
}
