package par

import (
	"sync/atomic"
	"testing"
)

func TestForCallsEachIndexOnce(t *testing.T) {
	for _, tc := range []struct{ workers, n int }{{1, 0}, {1, 5}, {4, 1}, {4, 1000}, {0, 3}, {-2, 3}} {
		counts := make([]int32, tc.n)
		var running, most int32
		For(tc.workers, tc.n, func(i int) {
			r := atomic.AddInt32(&running, 1)
			for {
				m := atomic.LoadInt32(&most)
				if r <= m || atomic.CompareAndSwapInt32(&most, m, r) {
					break
				}
			}
			atomic.AddInt32(&counts[i], 1)
			atomic.AddInt32(&running, -1)
		})
		for i, c := range counts {
			if c != 1 {
				t.Errorf("workers=%d n=%d: f(%d) called %d times", tc.workers, tc.n, i, c)
			}
		}
		if limit := int32(max(tc.workers, 1)); most > limit {
			t.Errorf("workers=%d n=%d: %d calls at once", tc.workers, tc.n, most)
		}
	}
}
