package profile

import (
	"bytes"
	"fmt"
	"os"

	"bloop/cache"
)

// The recording kernel's symbols: perf's copy of kallsyms or the running
// kernel's, each only of the recording's boot or moved to it. KASLR
// puts the kernel elsewhere at every boot: a table of another boot names
// frames after other symbols.

// kernelSource says where the recording kernel's symbols can be read.
type kernelSource struct {
	copy      string     // perf's copy of kallsyms (perfKallsyms), "" for none
	text      kernelText // where the recording's boot had the kernel
	osRelease string     // the kernel release recorded on, "" when unknown
}

// loadKernelSyms returns the recording kernel's symbols: perf's copy of
// them, else the running kernel's when it runs the recorded release,
// whichever puts the kernel where the recording's boot had it; else the
// first of them moved there (relocate), which note says.
func loadKernelSyms(c *cache.Cache, src kernelSource) (ks *kernelSyms, note string, err error) {
	type table struct {
		ks   *kernelSyms
		from string
	}
	var others []table
	var first error
	try := func(ks *kernelSyms, from string, err error) bool {
		switch {
		case err != nil:
			if first == nil {
				first = err
			}
		case src.text.fits(ks):
			return true
		default:
			others = append(others, table{ks, from})
		}
		return false
	}
	if src.copy != "" {
		ks, err := readKallsymsCopy(c, src.copy)
		if try(ks, src.copy, err) {
			return ks, "", nil
		}
	}
	if err := runsRelease(src.osRelease); err != nil {
		try(nil, "", err)
	} else if ks, err := loadKallsyms(c); try(ks, kallsymsFile, err) {
		return ks, "", nil
	}
	for _, t := range others {
		if moved, ok := src.text.relocate(t.ks); ok {
			return moved, fmt.Sprintf("kernel symbols: %s is of another boot; its kernel text moved to where the recording's boot had it (%s at %#x), its modules' symbols left out", t.from, src.text.sym, src.text.addr), nil
		}
	}
	if len(others) > 0 {
		// A table there is, of another boot: say why it is not used.
		t := others[0]
		a, _ := t.ks.addrOf(src.text.sym)
		return nil, "", fmt.Errorf("kernel symbols: %s has %s at %#x, where the recording's boot had it at %#x, and no _etext to move its kernel text by: kernel frames stay at their addresses", t.from, src.text.sym, a, src.text.addr)
	}
	return nil, "", first
}

// readKallsymsCopy reads a copy of kallsyms (perf's, of the recording's
// boot): from the cache when it was read before (keptKallsyms).
func readKallsymsCopy(c *cache.Cache, path string) (*kernelSyms, error) {
	ks, err := keptKallsyms(c, path, func() string { return copyKey(path) }, func() ([]byte, error) { return os.ReadFile(path) })
	if err != nil {
		return nil, fmt.Errorf("kernel symbols: %w", err)
	}
	if ks.syms.len() == 0 {
		return nil, fmt.Errorf("kernel symbols: %s lists no text symbol with an address: kernel frames stay at their addresses", path)
	}
	return ks, nil
}

// releaseFile is where the running kernel's release is read.
var releaseFile = "/proc/sys/kernel/osrelease"

// runsRelease checks that the running kernel is of release rel (perf's
// HEADER_OSRELEASE; "": unknown, assumed).
func runsRelease(rel string) error {
	if rel == "" {
		return nil
	}
	b, err := os.ReadFile(releaseFile)
	if err != nil {
		return fmt.Errorf("kernel symbols: %w", err)
	}
	if cur := string(bytes.TrimSpace(b)); cur != rel {
		return fmt.Errorf("recorded on kernel %s, this is %s: kernel frames stay at their addresses", rel, cur)
	}
	return nil
}

// kernelText is where the recording's boot had the kernel: the address
// of symbol sym, which perf gives with the kernel's mapping
// (perfevent.KernelRelocSym); sym is "" when the file did not say.
type kernelText struct {
	sym  string
	addr uint64
}

// fits tells whether ks is of the recording's boot: it puts sym where
// that boot did, or cannot tell.
func (k kernelText) fits(ks *kernelSyms) bool {
	if k.sym == "" {
		return true
	}
	a, ok := ks.addrOf(k.sym)
	return !ok || a == k.addr
}

// relocate moves ks, of another boot, to the recording's: KASLR moves
// the kernel's text, sym to _etext, as one, so its symbols move by one
// offset; the modules are loaded each at an address of its own, so
// theirs, and what lies past _etext, are left out (a frame there stays
// at its address). ok is false when ks lacks sym or _etext.
func (k kernelText) relocate(ks *kernelSyms) (*kernelSyms, bool) {
	lo, ok1 := ks.addrOf(k.sym)
	hi, ok2 := ks.addrOf("_etext")
	if !ok1 || !ok2 || hi < lo {
		return nil, false
	}
	delta := k.addr - lo
	var syms []symbol
	for _, l := range []*symList{&ks.syms, &ks.aliases} {
		for i := range l.len() {
			if a := l.addr(i); lo <= a && a < hi {
				syms = append(syms, symbol{a + delta, l.name(i)})
			}
		}
	}
	// Past the text: no symbol (lookup).
	moved := newKernelSyms(append(syms, symbol{hi + delta, ""}))
	return moved, true
}

// kernelSource is where the recording kernel's symbols are read, that
// kernel's release being osRelease.
func (s *space) kernelSource(osRelease string) kernelSource {
	return kernelSource{copy: s.kcopy, text: s.ktext, osRelease: osRelease}
}
