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
			// Sorted here, beside the other modules' work: a million
			// addresses of one module take a tenth of a second.
			slices.Sort(as)
			p.structureOf(m, slices.Compact(as))
		}()
	}
	wg.Wait()
}
