package heapfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live, floor uint64
		base, want  int
	}{
		{0, 64 * mib, 100, 1600},       // the first goal: the runtime's minimum, scaled
		{2 * mib, 64 * mib, 100, 1600}, // the minimum still holds the goal at the floor
		{8 * mib, 64 * mib, 100, 700},  // 8 MiB * 8 = 64
		{20 * mib, 64 * mib, 100, 220},
		{31 * mib, 64 * mib, 100, 106},
		{32 * mib, 64 * mib, 100, 100}, // the base reaches the floor
		{500 * mib, 64 * mib, 100, 100},
		{20 * mib, 64 * mib, 300, 300}, // a base above what the floor needs
		{0, 2 * mib, 100, 100},         // a floor below the runtime's minimum
	} {
		if got := percent(c.live, c.floor, c.base); got != c.want {
			t.Errorf("percent(%d MiB, %d MiB, %d) = %d, want %d", c.live/mib, c.floor/mib, c.base, got, c.want)
		}
	}
}

// TestSet: below the floor the heap grows without a cycle of the
// collector's own; past it the collector runs again, at the base
// percentage.
func TestSet(t *testing.T) {
	if v := debug.SetGCPercent(100); v != 100 {
		debug.SetGCPercent(v)
		t.Skipf("GOGC=%d here", v)
	}
	runtime.GC()
	once = sync.Once{} // a test run again (-count) sets it again
	Set(48 << 20)
	cycles := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/automatic:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	before := cycles()
	var keep [][]byte
	for range 32 { // 32 MiB live: 3 cycles from 4 MiB without the floor
		keep = append(keep, make([]byte, 1<<20))
	}
	if n := cycles() - before; n != 0 {
		t.Errorf("%d cycles below the floor", n)
	}
	for range 96 {
		keep = append(keep, make([]byte, 1<<20))
	}
	if cycles() == before {
		t.Errorf("no cycle with 128 MiB live, past a floor of 48 MiB")
	}
	// The finalizer sets the base percentage after a cycle past the floor.
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		p := debug.SetGCPercent(100)
		if p == 100 {
			break
		}
		debug.SetGCPercent(p)
		if time.Now().After(deadline) {
			t.Fatalf("percentage %d with 128 MiB live, want the base 100", p)
		}
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(keep)
}
