package heapfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
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
// collector's own; past it the collector runs again, at the percentage
// asked for.
func TestSet(t *testing.T) {
	if v := debug.SetGCPercent(100); v != 100 {
		debug.SetGCPercent(v)
		t.Skipf("GOGC=%d here", v)
	}
	defer debug.SetGCPercent(100)
	for _, pct := range []int{100, 50} {
		t.Run(strconv.Itoa(pct), func(t *testing.T) {
			debug.SetGCPercent(100)
			runtime.GC()
			once = sync.Once{} // Set acts once per process: again for each case
			Set(48<<20, pct)
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
			// A cycle began past the floor; on a busy machine it may not
			// have ended yet.
			deadline := time.Now().Add(10 * time.Second)
			for cycles() == before && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if cycles() == before {
				t.Errorf("no cycle with 128 MiB live, past a floor of 48 MiB")
			}
			// The finalizer sets the percentage asked for after a cycle
			// past the floor.
			for {
				runtime.GC()
				p := debug.SetGCPercent(pct)
				if p == pct {
					break
				}
				debug.SetGCPercent(p)
				if time.Now().After(deadline) {
					t.Fatalf("percentage %d with 128 MiB live, want %d", p, pct)
				}
				time.Sleep(10 * time.Millisecond)
			}
			runtime.KeepAlive(keep)
		})
	}
}

// TestFloorAfterCycles: the floor holds after the first cycle too, when
// the program allocates between a cycle and the finalizer that sets the
// next goal. With one P the finalizer runs when the allocating goroutine
// yields, here after each 16 MiB (bloop's readers, on every P, are
// preempted every 10 ms), by when the heap has grown past what the cycle
// kept: read as live, that put the goal below the floor and stopped the
// watch.
func TestFloorAfterCycles(t *testing.T) {
	if v := debug.SetGCPercent(100); v != 100 {
		debug.SetGCPercent(v)
		t.Skipf("GOGC=%d here", v)
	}
	defer debug.SetGCPercent(100)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	runtime.GC()
	once = sync.Once{}
	const mib = 1 << 20
	Set(48*mib, 100)
	keep := make([][]byte, 8)
	for i := range keep {
		keep[i] = make([]byte, mib)
	}
	s := []metrics.Sample{{Name: "/gc/cycles/automatic:gc-cycles"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	const churn = 960 // MiB of garbage, 1 MiB at a time
	var sink []byte
	for i := range churn {
		sink = make([]byte, mib)
		sink[0] = 1
		if i%16 == 15 {
			runtime.Gosched()
		}
	}
	metrics.Read(s)
	// 8 MiB live under a 48 MiB floor: a cycle per 40 MiB allocated, 24
	// in all; the runtime's own goal (16 MiB) would make it 120.
	if n := s[0].Value.Uint64() - before; n > churn/40+8 {
		t.Errorf("%d cycles for %d MiB allocated with 8 MiB live under a 48 MiB floor, want about %d", n, churn, churn/40)
	}
	runtime.KeepAlive(keep)
	runtime.KeepAlive(sink)
}

func TestLiveFrom(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		goal uint64
		pct  int
		want uint64
	}{
		{64 * mib, 300, 16 * mib},
		{64 * mib, 100, 32 * mib},
		{96 * mib, 50, 64 * mib},
		{4 * mib, 100, 2 * mib}, // the runtime's minimum: live is at most this
	} {
		if got := liveFrom(c.goal, c.pct); got != c.want {
			t.Errorf("liveFrom(%d MiB, %d) = %d MiB, want %d", c.goal/mib, c.pct, got/mib, c.want/mib)
		}
	}
}
