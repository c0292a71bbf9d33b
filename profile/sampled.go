package profile

import (
	"slices"
	"sync"
)

// analyseSampled computes, before the stacks are scoped, the scope index
// of each module the stacks reach, for the procedures holding their
// frames only: a report need not wait for the whole of libc or of an
// interpreter's library when a few hundred of its procedures were
// sampled. The modules are analysed side by side (p.opt.Jobs at once).
func (p *Profile) analyseSampled() {
	addrs := map[*Module][]uint64{}
	p.stacks.each(func(n *stackNode) {
		f := p.stacks.frame(n)
		m := f.Mod
		if m == nil || m.kernel != nil || m.Img == nil {
			return // [partial]; the kernel's frames are placed as before
		}
		addrs[m] = append(addrs[m], f.Addr)
	})
	sem := make(chan struct{}, max(1, p.opt.Jobs))
	var wg sync.WaitGroup
	for m, as := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			// Sorted here, beside the other modules' work: one module
			// can have a million.
			p.structureOf(m, slices.Compact(sortAddrs(as)))
		}()
	}
	wg.Wait()
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
