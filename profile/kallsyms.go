package profile

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"sync"

	"bloop/cache"
)

// kallsymsFile lists the running kernel's symbols.
var kallsymsFile = "/proc/kallsyms"

// kernelSyms are the kernel's text symbols by address.
type kernelSyms struct {
	addrs []uint64
	names []string
}

// parseKallsyms reads /proc/kallsyms lines ("address type name
// [module]"), keeping text symbols with an address: all are zero when
// kernel.kptr_restrict hides them.
func parseKallsyms(b []byte) *kernelSyms {
	type sym struct {
		addr uint64
		name string
	}
	syms := make([]sym, 0, len(b)/40) // a line is about 45 bytes
	// The names are parts of one string, not one allocation each (a
	// third of the parsing of 120,000 lines).
	for text := string(b); text != ""; {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		if name, a, ok := textSymbol(line); ok {
			syms = append(syms, sym{a, name})
		}
	}
	less := func(a, b sym) int { return cmp.Compare(a.addr, b.addr) }
	if !slices.IsSortedFunc(syms, less) { // the kernel lists its own in order, modules after
		slices.SortStableFunc(syms, less)
	}
	ks := &kernelSyms{}
	for _, s := range syms {
		if n := len(ks.addrs); n > 0 && ks.addrs[n-1] == s.addr {
			continue // aliases: the first name listed
		}
		ks.addrs = append(ks.addrs, s.addr)
		ks.names = append(ks.names, s.name)
	}
	return ks
}

// addrOf returns the address of the symbol name.
func (k *kernelSyms) addrOf(name string) (uint64, bool) {
	for i, n := range k.names {
		if n == name {
			return k.addrs[i], true
		}
	}
	return 0, false
}

// lookup finds the symbol holding addr: the last at or below it.
func (k *kernelSyms) lookup(addr uint64) (name string, start uint64, ok bool) {
	if k == nil {
		return "", 0, false
	}
	i := sort.Search(len(k.addrs), func(i int) bool { return k.addrs[i] > addr }) - 1
	if i < 0 {
		return "", 0, false
	}
	return k.names[i], k.addrs[i], true
}

// kernelLoad reads the running kernel's symbols (loadKallsyms) once, in
// the background from the first sample with kernel frames on: the
// unwinding workers that need the kernel's module wait for it then.
type kernelLoad struct {
	once sync.Once
	done chan struct{}
	ks   *kernelSyms
	err  error
}

// start begins the reading, once.
func (k *kernelLoad) start(c *cache.Cache) {
	k.once.Do(func() {
		k.done = make(chan struct{})
		go func() {
			defer close(k.done)
			k.ks, k.err = loadKallsyms(c)
		}()
	})
}

// wait starts the reading unless started, and returns its result.
func (k *kernelLoad) wait(c *cache.Cache) (*kernelSyms, error) {
	k.start(c)
	<-k.done
	return k.ks, k.err
}
