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
	stacks  []byte   // the samples' stack copies, back to back
	inPlace int      // the span of the stacks read where they lie
	chains  []uint64 // their callchains, back to back
	out     []unwound
	frames  []Frame // the paths' frames, back to back
	done    chan struct{}
	// shard lists, per shard, the paths (indexes in out) it files, seq
	// their samples' numbers; pending counts the shards not done.
	shard   [][]int32
	seq     []uint64
	pending atomic.Int32
}

// take copies s into the batch.
func (b *batch) take(s *sample.Sample) {
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
}

// full is whether the batch is to be sent: batchLen samples, or stacks
// spanning batchBytes.
func (b *batch) full() bool {
	return len(b.samples) == batchLen || len(b.stacks)+b.inPlace >= batchBytes
}

func (b *batch) reset() {
	b.samples, b.stacks, b.chains, b.out, b.frames = b.samples[:0], b.stacks[:0], b.chains[:0], b.out[:0], b.frames[:0]
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
	free := make(chan *batch, 2*jobs+2)
	for range cap(free) {
		free <- &batch{done: make(chan struct{}, 1)}
	}
	work := make(chan *batch, cap(free))
	order := make(chan *batch, cap(free))
	var workers sync.WaitGroup
	for range jobs {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for b := range work {
				for i := range b.samples {
					b.out = append(b.out, p.sp.unwindSample(&b.samples[i], &p.Meta, &b.frames))
				}
				b.done <- struct{}{}
			}
		}()
	}
	filed := make(chan struct{})
	if p.deferScopes && p.stacks.nodes.n == 0 {
		go func() {
			defer close(filed)
			// A shard per two workers: on two cores the merge costs
			// more than a second filer gains (1.09x the wall time and
			// 140 MiB more on a frame-pointer file of 2.5 million
			// samples), the single shard is the tree itself.
			p.fileSharded(order, free, max(1, min(jobs/2, maxShards)))
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
				free <- b
			}
		}()
	}
	var lease *sample.Lease
	cur := <-free
	send := func() {
		order <- cur
		work <- cur
	}
	err := r.scan(r.path, func(e sample.Entry) error {
		if l, ok := e.(*sample.Lease); ok {
			// The workers read the stacks in place, released once they
			// are done.
			if l.Keep() {
				lease = l
			}
			return nil
		}
		s, ok := e.(*sample.Sample)
		if !ok {
			return nil
		}
		cur.take(s)
		if cur.full() {
			send()
			cur = <-free
		}
		return nil
	})
	if len(cur.samples) > 0 {
		send()
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

// maxShards bounds the shards the stacks are filed in (mergeShards
// numbers them in a byte).
const maxShards = 16

// fileSharded takes the unwound batches in the order of the file, counts
// their paths and has the shards file them (shards.go); a batch is free
// again once every shard is done with it. The profile's stacks are the
// shards' merged.
func (p *Profile) fileSharded(order <-chan *batch, free chan<- *batch, n int) {
	shards := make([]*stacks, n)
	in := make([]chan *batch, n)
	var wg sync.WaitGroup
	for k := range shards {
		shards[k] = &stacks{events: p.stacks.events}
		in[k] = make(chan *batch, cap(free))
		wg.Add(1)
		go func(sh *stacks, in <-chan *batch) {
			defer wg.Done()
			for b := range in {
				for _, i := range b.shard[k] {
					x := &b.out[i].Path
					sh.fileAt(b.seq[i], x.Tid, x.Frames, x.Out, x.Event, x.Value)
				}
				if b.pending.Add(-1) == 0 {
					b.reset()
					free <- b
				}
			}
		}(shards[k], in[k])
	}
	var seq uint64
	for b := range order {
		<-b.done
		if len(b.shard) != n {
			b.shard = make([][]int32, n)
		}
		b.seq = slices.Grow(b.seq[:0], len(b.out))[:len(b.out)]
		for i := range b.out {
			x := &b.out[i]
			p.account(x)
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
