package profile

import (
	"math"
	"sync"
	"sync/atomic"

	"bloop/sample"
)

// A frame-pointer file's samples are read in parts (perfevent's Parts)
// by readers side by side: one reader, walking, hashing and looking up
// every sample's callchain, was the bound of a warm report of such a
// file (85 of its 140 ms on 1.26 million samples). The readers take the
// parts in turn, each with its own memo of callchains and its own
// batches, and the batches go on to the filing in the order of the
// file, part after part: the profile is the same bytes. A reader takes
// its callchains to frames itself (a file read in parts has no stack
// copies to unwind): handed to a worker, each sample's record was read
// on the other core, a transfer between the cores' caches per sample
// (84 ns of a warm report of g++'s file).

// partReader reads a file's samples in parts; sample.PerfParts is one.
type partReader interface {
	Len() int
	// ScanSamples passes part i's samples to sample and its other
	// records to f as the lazy scan does; scans of different parts may
	// run side by side.
	ScanSamples(i int, sample func(*sample.PerfSample) error, f func(sample.Entry) error) error
	Close() error
}

// maxReaders bounds the readers of parts (the memo's slots number them
// in a few bits).
const maxReaders = 16

// partReader is the file to read in parts, nil when it is read by one
// reader: with no memo (the memo's repeats are what the readers save),
// with stacks (workers read them in place from one reader's mapping,
// and unwinding, not reading, bounds such a report), or a file of one
// part.
func (r *recording) partReader(p *Profile, memo bool) partReader {
	if !memo || r.openParts == nil || len(r.parts) < 3 || p.Meta.StackSize != 0 {
		return nil
	}
	pr, err := r.openParts(r.path, r.parts)
	if err != nil {
		return nil // read as one part, which says what is wrong
	}
	return pr
}

// partEnd ends a part's batches on a reader's way to the filing.
var partEnd = &batch{}

// readParts reads pr's parts on readers goroutines, part i on reader
// i%readers, and sends their batches to work (unwinding) and, part
// after part, to order (filing). The error is the first part's that
// failed, the parts after it not read.
func readParts(p *Profile, pr partReader, readers, poolLen int, work, order chan<- *batch) error {
	n := pr.Len()
	p.partsRead = n
	readers = max(1, min(readers, n))
	errs := make([]error, n)
	var failed atomic.Int64 // the first part that failed
	failed.Store(math.MaxInt64)
	outs := make([]chan *batch, readers)
	var wg sync.WaitGroup
	for k := range readers {
		// Room for every batch of its pool and the end of each of its
		// parts: a part whose samples were all repeats sends its end
		// alone, which holds no memory, and a reader that had to wait
		// to send it (the other's part being slower) waited 10 to 15 ms
		// of a warm report's 110 ms pass. Its batches are bounded by the
		// pool.
		outs[k] = make(chan *batch, poolLen+(n+readers-1)/readers)
		free := newPool(poolLen)
		fill := &filler{sp: p.sp, memo: &chainMemo{stride: int32(readers), base: int32(k)},
			free: free, work: work, order: outs[k], unwind: p.unwindBatch}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := k; i < n; i += readers {
				if int64(i) < failed.Load() {
					fill.fresh()
					err := pr.ScanSamples(i, fill.perfSample, func(sample.Entry) error { return nil })
					if err != nil {
						errs[i] = err
						for f := failed.Load(); int64(i) < f && !failed.CompareAndSwap(f, int64(i)); f = failed.Load() {
						}
					}
					if i+readers >= n {
						fill.endRepeats() // the reader's last part
					}
					fill.flushPart()
				}
				outs[k] <- partEnd
			}
		}()
	}
	for i := range n {
		for b := range outs[i%readers] {
			if b == partEnd {
				break
			}
			order <- b
		}
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
