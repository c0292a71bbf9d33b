package profile

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"bloop/cache"
	"bloop/perfevent"
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
	if i < 0 {
		return "", 0, false
	}
	return k.names[i], k.addrs[i], true
}

// kernelLoad reads the kernel's symbols (loadKernelSyms) once, in the
// background from the first sample with kernel frames on: the unwinding
// workers that need the kernel's module wait for it then.
type kernelLoad struct {
	once sync.Once
	done chan struct{}
	ks   *kernelSyms
	err  error
}

// start begins the reading, once: of the copy of kallsyms at path
// recorded (perfKallsyms), else of the running kernel's.
func (k *kernelLoad) start(c *cache.Cache, recorded string) {
	k.once.Do(func() {
		k.done = make(chan struct{})
		go func() {
			defer close(k.done)
			k.ks, k.err = loadKernelSyms(c, recorded)
		}()
	})
}

// wait starts the reading unless started, and returns its result.
func (k *kernelLoad) wait(c *cache.Cache, recorded string) (*kernelSyms, error) {
	k.start(c, recorded)
	<-k.done
	return k.ks, k.err
}

// loadKernelSyms reads the copy of kallsyms at path recorded, else
// (recorded "") the running kernel's symbols (loadKallsyms).
func loadKernelSyms(c *cache.Cache, recorded string) (*kernelSyms, error) {
	if recorded == "" {
		return loadKallsyms(c)
	}
	// A file of the recording, not the running kernel's: read whole, and
	// not kept in the cache, which holds the running kernel's table.
	b, err := os.ReadFile(recorded)
	if err != nil {
		return nil, fmt.Errorf("kernel symbols: %w", err)
	}
	ks := parseKallsyms(b)
	if len(ks.addrs) == 0 {
		return nil, fmt.Errorf("kernel symbols: %s lists no text symbol with an address: kernel frames stay at their addresses", recorded)
	}
	return ks, nil
}

// perfBuildIDDir is perf's build-id cache: $PERF_BUILDID_DIR, else
// ~/.debug ("" when there is no home).
func perfBuildIDDir() string {
	if d := os.Getenv("PERF_BUILDID_DIR"); d != "" {
		return d
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".debug")
	}
	return ""
}

// perfKallsyms is the copy of /proc/kallsyms that perf record kept in
// its build-id cache for the kernel of build-id id, "" when there is
// none. It is the recording's boot's own (with the modules it had
// loaded), perf report reads it rather than /proc/kallsyms, and perf
// archive carries it to other machines; it is also a plain file, where
// /proc/kallsyms costs the kernel 50 ms to write out.
func perfKallsyms(id []byte) string {
	dir := perfBuildIDDir()
	if len(id) == 0 || dir == "" {
		return ""
	}
	p := filepath.Join(dir, perfevent.KernelMap, hex.EncodeToString(id), "kallsyms")
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return p
}

// kernelText is where the recording's boot had the kernel: the address
// of symbol sym, which perf gives with the kernel's mapping
// (perfevent.KernelRelocSym); sym is "" when the file did not say.
type kernelText struct {
	sym  string
	addr uint64
}

// check refuses symbols ks, read from file from, of another boot of the
// kernel: KASLR put every symbol elsewhere, and frames would get the
// names of others.
func (k kernelText) check(ks *kernelSyms, from string) error {
	if k.sym == "" {
		return nil
	}
	if a, ok := ks.addrOf(k.sym); ok && a != k.addr {
		return fmt.Errorf("kernel symbols: %s has %s at %#x, where the recording's boot had it at %#x: kernel frames stay at their addresses", from, k.sym, a, k.addr)
	}
	return nil
}
