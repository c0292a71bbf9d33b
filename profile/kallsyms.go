package profile

import (
	"cmp"
	"encoding/binary"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"bloop/cache"
)

// kallsymsFile lists the running kernel's symbols.
var kallsymsFile = "/proc/kallsyms"

// kernelSyms are the kernel's text symbols by address. They are held in
// the form the cache stores them in (kallsymscache.go), so that a stored
// table is used where it was read, not decoded: 121,000 symbols decoded
// into slices of addresses and names took 2 to 10 ms of a warm report's
// opening, beside the modules' (and 3 MB of pointers for the collector
// to scan).
type kernelSyms struct {
	syms symList
	// aliases are the other names listed at an address of syms: _text
	// and _stext are one address, either first.
	aliases symList
}

// symList is symbols in ascending order of address: symbol i is at base
// plus the i-th little-endian word of addrs (modulo 2^64), and is named
// by the i-th pair of little-endian 32-bit words of refs, an offset and
// a length in text.
type symList struct {
	base  uint64
	addrs []byte
	refs  []byte
	text  string
}

func (l *symList) len() int { return len(l.addrs) / 8 }

func (l *symList) addr(i int) uint64 { return l.base + binary.LittleEndian.Uint64(l.addrs[8*i:]) }

func (l *symList) name(i int) string {
	r := l.refs[8*i : 8*i+8]
	off, n := binary.LittleEndian.Uint32(r), binary.LittleEndian.Uint32(r[4:])
	return l.text[off : off+n]
}

// add appends a symbol at addr named by the n bytes at off in text.
func (l *symList) add(addr uint64, off, n int) {
	l.addrs = binary.LittleEndian.AppendUint64(l.addrs, addr-l.base)
	l.refs = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(l.refs, uint32(off)), uint32(n))
}

// index is the index of the symbol named name, -1 if none.
func (l *symList) index(name string) int {
	for i := range l.len() {
		if l.name(i) == name {
			return i
		}
	}
	return -1
}

// symbol is a symbol's address and name, for building and comparing
// tables.
type symbol struct {
	addr uint64
	name string
}

// list is l's symbols.
func (l *symList) list() []symbol {
	out := make([]symbol, l.len())
	for i := range out {
		out[i] = symbol{l.addr(i), l.name(i)}
	}
	return out
}

// newKernelSyms makes the table of syms, sorted by address (stably: the
// first listed at an address names it, the others are its aliases),
// their names copied into one text.
func newKernelSyms(syms []symbol) *kernelSyms {
	less := func(a, b symbol) int { return cmp.Compare(a.addr, b.addr) }
	if !slices.IsSortedFunc(syms, less) { // the kernel lists its own in order, modules after
		slices.SortStableFunc(syms, less)
	}
	size := 0
	for _, s := range syms {
		size += len(s.name)
	}
	text := make([]byte, 0, size)
	ks := &kernelSyms{}
	ks.syms.addrs, ks.syms.refs = make([]byte, 0, 8*len(syms)), make([]byte, 0, 8*len(syms))
	for i, s := range syms {
		l := &ks.syms
		if i > 0 && syms[i-1].addr == s.addr {
			l = &ks.aliases
		}
		l.add(s.addr, len(text), len(s.name))
		text = append(text, s.name...)
	}
	t := unsafe.String(unsafe.SliceData(text), len(text)) // not written again
	ks.syms.text, ks.aliases.text = t, t
	return ks
}

// parseKallsyms reads /proc/kallsyms lines ("address type name
// [module]"), keeping text symbols with an address: all are zero when
// kernel.kptr_restrict hides them.
func parseKallsyms(b []byte) *kernelSyms {
	syms := make([]symbol, 0, len(b)/40) // a line is about 45 bytes
	// The names are parts of b until copied into the table: a string
	// each was a third of the parsing of 120,000 lines.
	for text := unsafe.String(unsafe.SliceData(b), len(b)); text != ""; {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		if name, a, ok := textSymbol(line); ok {
			syms = append(syms, symbol{a, name})
		}
	}
	return newKernelSyms(syms)
}

// addrOf returns the address of the symbol name.
func (k *kernelSyms) addrOf(name string) (uint64, bool) {
	if i := k.syms.index(name); i >= 0 {
		return k.syms.addr(i), true
	}
	if i := k.aliases.index(name); i >= 0 {
		return k.aliases.addr(i), true
	}
	return 0, false
}

// lookup finds the symbol holding addr: the last at or below it.
func (k *kernelSyms) lookup(addr uint64) (name string, start uint64, ok bool) {
	if k == nil {
		return "", 0, false
	}
	l := &k.syms
	i := sort.Search(l.len(), func(i int) bool { return l.addr(i) > addr }) - 1
	if i < 0 {
		return "", 0, false // below the first
	}
	if name = l.name(i); name == "" {
		return "", 0, false // past a moved table's text
	}
	return name, l.addr(i), true
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
