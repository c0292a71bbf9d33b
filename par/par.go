// Package par runs independent pieces of work on a bounded number of
// goroutines: the loader's sections and compilation units, the pipeline's
// procedures.
package par

import "sync"

// For calls f(0), ..., f(n-1) on up to workers goroutines (at least one)
// and returns when all calls have. Indices are handed out in order, so the
// earliest are started first.
func For(workers, n int, f func(i int)) {
	if workers < 1 {
		workers = 1
	}
	workers = min(workers, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}
