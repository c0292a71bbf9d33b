// Package heapfloor keeps the Go collector from running while the heap
// is small. The runtime starts collecting at 4 MiB and doubles from what
// each cycle keeps, so a warm report, whose heap grows to 60 MiB, ran
// eight cycles in its first 50 ms, each stopping its goroutines and
// marking a heap that was nearly all live. With a floor the heap grows
// to it uncollected; past it the collector paces as its caller says.
//
// The floor is kept by setting the GC percentage after each cycle (a
// finalizer of an object dropped at once runs after the cycle that finds
// it unreachable): high enough that the next goal is the floor while the
// live heap is below it, the base percentage once it is not. The peak of
// a program is then at most the floor, or what it was without one.
package heapfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// defaultHeapMinimum is the runtime's first goal at GOGC=100: the goal
// is never below it scaled by the percentage.
const defaultHeapMinimum = 4 << 20

var (
	once sync.Once
	// mu orders the adjustments; current is the watch Set started, and
	// a finalizer of another (a test that sets again) stops.
	mu      sync.Mutex
	current *watch
)

// watch is the floor kept: the finalizer's goroutine adjusts it after
// each cycle.
type watch struct {
	floor uint64
	base  int // the percentage past the floor
	cur   int // the percentage in effect
}

// Set keeps the collector from running before the heap reaches min
// bytes, once per process; past it a cycle runs when the heap has grown
// by pct percent over what the last one kept (GOGC's meaning). It does
// nothing when GOGC is set (the user's own pacing) or the collector is
// off.
func Set(min uint64, pct int) {
	once.Do(func() {
		if os.Getenv("GOGC") != "" {
			return
		}
		// Under mu, so that the percentage is set by no other watch
		// between this one's setting and its reading.
		mu.Lock()
		defer mu.Unlock()
		if old := debug.SetGCPercent(pct); old < 0 {
			debug.SetGCPercent(old)
			return
		}
		w := &watch{floor: min, base: pct, cur: pct}
		current = w
		if w.adjust() {
			w.arm()
		}
	})
}

// sentinel is dropped as soon as made: its finalizer runs after the
// next cycle. Not tiny (16 bytes or more), so it is an object of its own:
// a block of the tiny allocator is kept alive by any of its objects.
type sentinel struct {
	_ [16]byte
}

func (w *watch) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		mu.Lock()
		more := current == w && w.adjust()
		mu.Unlock()
		if more {
			w.arm()
		}
	})
}

// adjust sets the percentage for the heap the last cycle kept; it
// reports whether the floor still holds the goal up (the live heap is
// below it), after which no cycle needs watching. mu is held.
func (w *watch) adjust() bool {
	// The live heap from the goal the last cycle set with the percentage
	// then in effect. Not HeapAlloc: the finalizer runs when the
	// goroutines let it, by when the heap has grown past what the cycle
	// kept; read as live, it put the goal below the floor and stopped
	// the watch (a cold report ran seven cycles below the floor). Not
	// runtime/metrics' live heap either: its package's start took 0.6 ms
	// of every bloop command's.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	pct := percent(liveFrom(ms.NextGC, w.cur), w.floor, w.base)
	debug.SetGCPercent(pct)
	w.cur = pct
	return pct != w.base
}

// liveFrom is the live heap a cycle kept when it set goal at pct percent
// (the runtime's minimum goal, for a smaller heap, gives at most that
// minimum).
func liveFrom(goal uint64, pct int) uint64 {
	return goal * 100 / uint64(100+pct)
}

// percent is the GC percentage that puts the next goal at the floor
// when the base percentage would put it below: the goal is the larger
// of live*(1+pct/100) and the runtime's minimum scaled by pct, so both
// are kept at most at the floor.
func percent(live, floor uint64, base int) int {
	if live*uint64(100+base)/100 >= floor {
		return base
	}
	p := int(floor * 100 / defaultHeapMinimum)
	if live > 0 {
		p = min(p, int(floor*100/live)-100)
	}
	return max(base, p)
}
