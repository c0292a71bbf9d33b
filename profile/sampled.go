package profile

import (
	"math/bits"
	"slices"
	"sync"
)

// analyseSampled computes, before the stacks are scoped, the scope index
// of each module the stacks reach, for the procedures holding their
// frames only: a report need not wait for the whole of libc or of an
// interpreter's library when a few hundred of its procedures were
// sampled. The modules are analysed side by side (p.opt.Jobs at once).
func (p *Profile) analyseSampled() {
	s := &p.stacks
	want := make([]bool, len(s.mods)+1)
	for i, m := range s.mods {
		// Not [partial] (0), nor the kernel: its frames are placed as before.
		want[i+1] = m != nil && m.kernel == nil && m.Img != nil
	}
	addrs := sampledAddrs(s, want)
	sem := make(chan struct{}, max(1, p.opt.Jobs))
	var wg sync.WaitGroup
	for k := range addrs {
		if addrs[k].n == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			// Listed here, beside the other modules' work: one module
			// can have a million frames.
			as := addrs[k].sorted()
			addrs[k] = moduleAddrs{}
			p.structureOf(s.mods[k-1], as)
		}()
	}
	wg.Wait()
}

// moduleAddrs are the addresses of one module's frames: a bitmap from
// lo of the distinct ones, or, where they span more than maxAddrBits,
// every frame's.
type moduleAddrs struct {
	lo, last uint64 // the lowest address and the highest
	n        int    // frames
	bits     []uint64
	all      chunked[uint64]
}

// maxAddrBits bounds a module's bitmap (16 MiB): a module's code spans
// far less (cc1plus's 30 MB: 3.7 MiB); frames wider apart than that are
// listed and sorted instead.
const maxAddrBits = 1 << 27

// sampledAddrs is the addresses of the frames of each module by number
// where want is true. Appended to a slice per module (found in a map)
// and sorted, the frames of g++'s profile (1.76 million, 194,000
// addresses of cc1plus) took 100 to 170 ms of a warm report on one core
// and 42 MB, copied and cleared at each doubling, more when the
// collector ran then; two passes over the nodes, the bounds then the
// bits, take 20 ms and a bitmap per module.
func sampledAddrs(s *stacks, want []bool) []moduleAddrs {
	addrs := make([]moduleAddrs, len(want))
	for k := range addrs {
		addrs[k].lo = ^uint64(0)
	}
	s.nodes.all(func(n *stackNode) bool {
		if n.parent != 0 && want[n.mod] {
			a := &addrs[n.mod]
			a.lo, a.last = min(a.lo, n.addr), max(a.last, n.addr)
			a.n++
		}
		return true
	})
	for k := range addrs {
		if a := &addrs[k]; a.n > 0 && a.last-a.lo < maxAddrBits {
			a.bits = make([]uint64, (a.last-a.lo)/64+1)
		}
	}
	s.nodes.all(func(n *stackNode) bool {
		if n.parent == 0 || !want[n.mod] {
			return true
		}
		a := &addrs[n.mod]
		if a.bits == nil {
			a.all.add(n.addr)
			return true
		}
		o := n.addr - a.lo
		a.bits[o/64] |= 1 << (o % 64)
		return true
	})
	return addrs
}

// sorted is the distinct addresses, in order.
func (a *moduleAddrs) sorted() []uint64 {
	if a.bits == nil {
		return slices.Compact(sortAddrs(a.all.flat()))
	}
	n := 0
	for _, w := range a.bits {
		n += bits.OnesCount64(w)
	}
	out := make([]uint64, 0, n)
	for i, w := range a.bits {
		for ; w != 0; w &= w - 1 {
			out = append(out, a.lo+uint64(i)*64+uint64(bits.TrailingZeros64(w)))
		}
	}
	return out
}

// sortAddrs sorts addresses by their digits of 11 bits from the lowest,
// as many as the largest has: the frames of a module's million sampled
// nodes (file addresses, most under 2^32) in a fraction of the time of a
// comparison sort (BenchmarkSortAddrs: a fifth), on the way to the
// analysis a report waits for.
func sortAddrs(as []uint64) []uint64 {
	if len(as) < 1024 {
		slices.Sort(as)
		return as
	}
	const bits = 11
	var top uint64
	for _, a := range as {
		top |= a
	}
	buf := make([]uint64, len(as))
	var count [1 << bits]int
	for shift := 0; shift < 64 && top>>shift != 0; shift += bits {
		clear(count[:])
		for _, a := range as {
			count[a>>shift&(1<<bits-1)]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, a := range as {
			d := a >> shift & (1<<bits - 1)
			buf[count[d]] = a
			count[d]++
		}
		as, buf = buf, as
	}
	return as
}
