package profile

import (
	"cmp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"bloop/cache"
)

// kallsymsFile lists the running kernel's symbols.
var kallsymsFile = "/proc/kallsyms"

// kernelSyms are the kernel's text symbols by address.
type kernelSyms struct {
	addrs []uint64
	names []string
	// aliases are the other names listed at an address of addrs, at
	// aliasAt: _text and _stext are one address, either first.
	aliases []string
	aliasAt []uint64
}

// parseKallsyms reads /proc/kallsyms lines ("address type name
// [module]"), keeping text symbols with an address: all are zero when
// kernel.kptr_restrict hides them. b must not change afterwards: the
// names are parts of it, not copies (a copy per name was a third of the
// parsing of 120,000 lines, and one of the whole 5 MB a fifth).
func parseKallsyms(b []byte) *kernelSyms {
	type sym struct {
		addr uint64
		name string
	}
	syms := make([]sym, 0, len(b)/40) // a line is about 45 bytes
	for text := unsafe.String(unsafe.SliceData(b), len(b)); text != ""; {
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
	ks := &kernelSyms{addrs: make([]uint64, 0, len(syms)), names: make([]string, 0, len(syms))}
	for _, s := range syms {
		if n := len(ks.addrs); n > 0 && ks.addrs[n-1] == s.addr {
			// Aliases: frames get the first name listed.
			ks.aliases, ks.aliasAt = append(ks.aliases, s.name), append(ks.aliasAt, s.addr)
			continue
		}
		ks.addrs = append(ks.addrs, s.addr)
		ks.names = append(ks.names, s.name)
	}
	return ks
}

// addrOf returns the address of the symbol name.
func (k *kernelSyms) addrOf(name string) (uint64, bool) {
	if i := slices.Index(k.names, name); i >= 0 {
		return k.addrs[i], true
	}
	if i := slices.Index(k.aliases, name); i >= 0 {
		return k.aliasAt[i], true
	}
	return 0, false
}

// lookup finds the symbol holding addr: the last at or below it.
func (k *kernelSyms) lookup(addr uint64) (name string, start uint64, ok bool) {
	if k == nil {
		return "", 0, false
	}
	i := sort.Search(len(k.addrs), func(i int) bool { return k.addrs[i] > addr }) - 1
	if i < 0 || k.names[i] == "" {
		return "", 0, false // below the first, or past a moved table's text
	}
	return k.names[i], k.addrs[i], true
}

// kernelLoad reads the recording kernel's symbols (loadKernelSyms) once,
// in the background from the first sample with kernel frames on: the
// unwinding workers that need the kernel's module wait for it then.
type kernelLoad struct {
	once sync.Once
	done chan struct{}
	ks   *kernelSyms
	note string
	err  error
}

// start begins the reading from src, once.
func (k *kernelLoad) start(c *cache.Cache, src kernelSource) {
	k.once.Do(func() {
		k.done = make(chan struct{})
		go func() {
			defer close(k.done)
			k.ks, k.note, k.err = loadKernelSyms(c, src)
		}()
	})
}

// wait starts the reading unless started, and returns its result.
func (k *kernelLoad) wait(c *cache.Cache, src kernelSource) (*kernelSyms, string, error) {
	k.start(c, src)
	<-k.done
	return k.ks, k.note, k.err
}
