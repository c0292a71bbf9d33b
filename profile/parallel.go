package profile

import (
	"slices"
	"sync"
	"sync/atomic"

	"bloop/sample"
)

// batchLen is how many samples a worker takes at once: enough to pay
// for the hand-over (at 64, the filing goroutine waited for batches a
// third of its time on a frame-pointer file of 2.5 million samples), few
// enough that the copies stay small (stacks are read in place from a
// mapped file); a variable so that tests cut small files into many
// batches.
var batchLen = 1024

// batchBytes bounds the stacks a batch holds, copied (a file read
// through a buffer: 32 KiB a sample with --call-graph dwarf,32768) or in
// place: the batches in flight (2 per worker and 2) must stay within the
// window of a mapped file's pages kept behind the reading (perfevent's
// dropWindow, 8 MiB), or the workers fault in again pages given back,
// and the whole file ends up resident (283 MiB for a report of a 226 MiB
// file, where 64 MiB do).
const batchBytes = 512 << 10

// batch is samples copied out of the reader's buffers (which the next
// record overwrites), and their paths once a worker has unwound them.
type batch struct {
	samples []sample.Sample
	// slots are the samples' memo slots (chainmemo.go), 0: none; reps
	// the samples sent as repeats of a slot, in order among them.
	slots   []int32
	reps    []repeat
	stacks  []byte   // the samples' stack copies, back to back
	inPlace int      // the span of the stacks read where they lie
	chains  []uint64 // their callchains, back to back
	out     []unwound
	frames  []Frame // the paths' frames, back to back
	done    chan struct{}
	pool    chan *batch // where the batch goes back once filed
	// shard lists, per shard, what it files: a path (an index in out),
	// or a repeat r as -1-r; seq and repSeq are their samples' numbers;
	// pending counts the shards not done.
	shard   [][]int32
	seq     []uint64
	repSeq  []uint64
	pending atomic.Int32
}

// repeat is n samples of a key seen before: its slot and their values
// summed (their thread, process and event are the slot's first
// sample's); a reader sends them at its end (chainMemo.repeatsInto).
type repeat struct {
	at    int32 // how many samples of the batch came before the first
	slot  int32
	n     uint64
	value uint64
}

// take copies s, of memo slot slot, into the batch.
func (b *batch) take(s *sample.Sample, slot int32) {
	c := *s
	if s.StackKept {
		// The record's span in the file is its whole stack copy, of
		// which Stack is the part the kernel filled.
		b.inPlace += max(len(s.Stack), int(s.StackSize))
	} else {
		n := len(b.stacks)
		b.stacks = append(b.stacks, s.Stack...)
		c.Stack = b.stacks[n:len(b.stacks):len(b.stacks)]
	}
	k := len(b.chains)
	b.chains = append(b.chains, s.Callchain...)
	c.Callchain = b.chains[k:len(b.chains):len(b.chains)]
	b.samples = append(b.samples, c)
	b.slots = append(b.slots, slot)
}

// full is whether the batch is to be sent: batchLen samples, or stacks
// spanning batchBytes.
func (b *batch) full() bool {
	return len(b.samples) >= batchLen || len(b.stacks)+b.inPlace >= batchBytes
}

func (b *batch) reset() {
	b.samples, b.stacks, b.chains, b.out, b.frames = b.samples[:0], b.stacks[:0], b.chains[:0], b.out[:0], b.frames[:0]
	b.slots, b.reps = b.slots[:0], b.reps[:0]
	b.inPlace = 0
	for k := range b.shard {
		b.shard[k] = b.shard[k][:0]
	}
}

// pathsParallel is paths with p.opt.Jobs workers unwinding batches of
// samples while the file is read, and one goroutine filing the paths in
// the order of the file: the profile is the one a single pass builds.
func (r *recording) pathsParallel(p *Profile, add func(Path)) error {
	jobs := p.opt.Jobs
	// Batches circulate: read, unwound, filed, free again; their number
	// bounds the memory whatever the file's size.
	poolLen := 2*jobs + 2
	work := make(chan *batch, poolLen*maxReaders)
	order := make(chan *batch, poolLen)
	var workers sync.WaitGroup
	for range jobs {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for b := range work {
				p.unwindBatch(b)
				b.done <- struct{}{}
			}
		}()
	}
	filed := make(chan struct{})
	// The memo of callchain samples needs the filing by shards, which
	// knows repeats, and the mappings' epochs.
	memo := false
	sharded := p.deferScopes && p.stacks.nodes.n == 0
	scan := r.scan
	if sharded && p.sp.times != nil && r.lazy != nil {
		memo, scan = true, r.lazy
	}
	if sharded {
		go func() {
			defer close(filed)
			// A shard per two workers: on two cores the merge costs
			// more than a second filer gains (1.09x the wall time and
			// 140 MiB more on a frame-pointer file of 2.5 million
			// samples), the single shard is the tree itself.
			p.fileSharded(order, poolLen, max(1, min(jobs/2, maxShards)))
		}()
	} else {
		go func() {
			defer close(filed)
			for b := range order {
				<-b.done
				for i := range b.out {
					p.account(&b.out[i])
					add(b.out[i].Path)
				}
				b.reset()
				b.pool <- b
			}
		}()
	}
	var err error
	var lease *sample.Lease
	if pr := r.partReader(p, memo); pr != nil {
		defer pr.Close()
		err = readParts(p, pr, min(jobs, maxReaders), poolLen, work, order)
	} else {
		lease, err = r.readOne(p, scan, memo, poolLen, work, order)
	}
	close(work)
	close(order)
	<-filed
	workers.Wait()
	if lease != nil {
		lease.Release()
	}
	return err
}

// unwindBatch unwinds b's samples into b.out.
func (p *Profile) unwindBatch(b *batch) {
	for i := range b.samples {
		b.out = append(b.out, p.sp.unwindSample(&b.samples[i], &p.Meta, &b.frames))
	}
}

// newPool is a pool of n free batches.
func newPool(n int) chan *batch {
	pool := make(chan *batch, n)
	for range n {
		pool <- &batch{done: make(chan struct{}, 1), pool: pool}
	}
	return pool
}

// readOne is pathsParallel's reading of the file by one goroutine, this
// one, with the memo when memo is set; the lease, when not nil, is to be
// released once the batches are filed.
func (r *recording) readOne(p *Profile, scan func(string, func(sample.Entry) error) error, memo bool, poolLen int, work, order chan<- *batch) (*sample.Lease, error) {
	free := newPool(poolLen)
	fill := &filler{sp: p.sp, free: free, work: work, order: order}
	if memo {
		fill.memo = &chainMemo{}
	}
	fill.fresh()
	var lease *sample.Lease
	err := scan(r.path, func(e sample.Entry) error {
		switch v := e.(type) {
		case *sample.Lease:
			// The workers read the stacks in place, released once they
			// are done.
			if v.Keep() {
				lease = v
			}
		case *sample.Sample:
			fill.sample(v, 0)
		case *sample.PerfSample:
			return fill.perfSample(v)
		}
		return nil
	})
	fill.endRepeats()
	fill.flush()
	return lease, err
}

// slotFirst is what a repeat of a slot is accounted and counted as: its
// first sample's thread, event and outcome.
type slotFirst struct {
	tid   uint32
	event int32
	out   Outcome
}

// slotEnd is a slot's distinct stack in a shard, and its event.
type slotEnd struct{ end, event int32 }

// filler fills batches with samples in the order of the file, and
// sends each on when full.
type filler struct {
	sp   *space     // the mappings, for the memo's epochs
	memo *chainMemo // nil: none
	cur  *batch
	// unwind, when set, unwinds a full batch here, not on a worker
	// (readParts).
	unwind      func(*batch)
	free        chan *batch
	work, order chan<- *batch
}

// sample adds s, of memo slot slot.
func (f *filler) sample(s *sample.Sample, slot int32) {
	f.cur.take(s, slot)
	f.next()
}

// endRepeats puts the memo's repeats into the batch being filled: the
// reader's last, after every first sample of its slots.
func (f *filler) endRepeats() {
	if f.memo != nil {
		f.memo.repeatsInto(f.cur)
	}
}

// perfSample adds a perf.data sample: a repeat when the memo has its
// key, else decoded.
func (f *filler) perfSample(v *sample.PerfSample) error {
	var k sample.ChainKey
	slot := int32(0)
	if f.memo != nil && !f.memo.off && v.Chain(&k) {
		var rep bool
		if slot, rep = f.memo.slotOf(f.sp, &k); rep {
			return nil // counted by the memo (repeatsInto)
		}
	}
	s, err := v.Sample()
	if err != nil {
		return err
	}
	f.sample(s, slot)
	return nil
}

// fresh takes a free batch to fill.
func (f *filler) fresh() {
	f.cur = <-f.free
}

// next sends the batch on when it is full.
func (f *filler) next() {
	if f.cur.full() {
		f.send()
		f.fresh()
	}
}

func (f *filler) send() {
	if f.unwind != nil {
		f.unwind(f.cur)
		f.cur.done <- struct{}{}
		f.order <- f.cur
		return
	}
	f.order <- f.cur
	f.work <- f.cur
}

// flush sends the last batch.
func (f *filler) flush() {
	if len(f.cur.samples) > 0 || len(f.cur.reps) > 0 {
		f.send()
	}
}

// flushPart sends the last batch of a part, or gives it back empty.
func (f *filler) flushPart() {
	if len(f.cur.samples) > 0 || len(f.cur.reps) > 0 {
		f.send()
	} else {
		f.free <- f.cur
	}
	f.cur = nil
}

// maxShards bounds the shards the stacks are filed in (mergeShards
// numbers them in a byte).
const maxShards = 16

// fileSharded takes the unwound batches in the order of the file, counts
// their paths and has the shards file them (shards.go); a batch is free
// again once every shard is done with it. The profile's stacks are the
// shards' merged.
func (p *Profile) fileSharded(order <-chan *batch, inLen, n int) {
	shards := make([]*stacks, n)
	in := make([]chan *batch, n)
	var wg sync.WaitGroup
	for k := range shards {
		shards[k] = &stacks{events: p.stacks.events}
		in[k] = make(chan *batch, inLen)
		wg.Add(1)
		go func(sh *stacks, in <-chan *batch) {
			defer wg.Done()
			var endOf slotTable[slotEnd]
			for b := range in {
				for _, i := range b.shard[k] {
					if i < 0 {
						r := &b.reps[-1-i]
						e := endOf[r.slot]
						sh.countAt(b.repSeq[-1-i], e.end, int(e.event), r.value, uint64(r.n))
						continue
					}
					x := &b.out[i].Path
					end := sh.fileAt(b.seq[i], x.Tid, x.Frames, x.Out, x.Event, x.Value)
					if slot := b.slots[i]; slot != 0 {
						endOf.set(slot, slotEnd{end, int32(x.Event)})
					}
				}
				if b.pending.Add(-1) == 0 {
					b.reset()
					b.pool <- b
				}
			}
		}(shards[k], in[k])
	}
	var seq uint64
	var first slotTable[slotFirst]
	for b := range order {
		<-b.done
		if len(b.shard) != n {
			b.shard = make([][]int32, n)
		}
		b.seq = slices.Grow(b.seq[:0], len(b.out))[:len(b.out)]
		b.repSeq = slices.Grow(b.repSeq[:0], len(b.reps))[:len(b.reps)]
		r := 0
		for i := 0; i <= len(b.out); i++ {
			for ; r < len(b.reps) && int(b.reps[r].at) == i; r++ {
				// A repeat is accounted as its slot's first sample
				// was: a callchain taken as perf recorded it. Its
				// thread's process is its first sample's, which that
				// sample set in its place in the file (a repeat comes
				// at its reader's end).
				rp := &b.reps[r]
				f := &first[rp.slot]
				p.Chains += rp.n
				if p.countN(&Path{Tid: f.tid, Out: f.out, Event: int(f.event), Value: rp.value}, rp.n) {
					k := shardOf(f.tid, n)
					b.shard[k] = append(b.shard[k], -1-int32(r))
					b.repSeq[r] = seq
					seq++
				}
			}
			if i == len(b.out) {
				break
			}
			x := &b.out[i]
			p.account(x)
			if slot := b.slots[i]; slot != 0 {
				first.set(slot, slotFirst{x.Tid, int32(x.Event), x.Out})
			}
			if p.count(&x.Path) {
				k := shardOf(x.Tid, n)
				b.shard[k] = append(b.shard[k], int32(i))
				b.seq[i] = seq
				seq++
			}
		}
		b.pending.Store(int32(n))
		for _, c := range in {
			c <- b
		}
	}
	for _, c := range in {
		close(c)
	}
	wg.Wait()
	if n == 1 {
		p.stacks = *shards[0]
		return
	}
	p.stacks = mergeShards(shards, p.stacks.events)
	p.stacks.seq = seq
}
