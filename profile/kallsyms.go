package profile

import (
	"bytes"
	"sort"
	"strconv"
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
	var syms []sym
	for _, line := range bytes.Split(b, []byte("\n")) {
		f := bytes.Fields(line)
		if len(f) < 3 || len(f[1]) != 1 {
			continue
		}
		switch f[1][0] {
		case 't', 'T', 'w', 'W':
		default:
			continue
		}
		a, err := strconv.ParseUint(string(f[0]), 16, 64)
		if err != nil || a == 0 {
			continue
		}
		syms = append(syms, sym{a, string(f[2])})
	}
	sort.SliceStable(syms, func(i, j int) bool { return syms[i].addr < syms[j].addr })
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
