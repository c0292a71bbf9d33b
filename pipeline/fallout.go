package pipeline

import (
	"sort"

	"bloop/isa"
	"bloop/loader"
)

// Dyninst parses code wherever control flows, extents notwithstanding: code
// that falls through the end of one procedure's symbol (after a call
// Dyninst does not know never returns, and the padding after it) is parsed
// as that procedure's, and hpcstruct writes the next procedure empty.
// On aarch64 it knows no PLT stub's name, so every call to exit@plt or
// abort@plt at the end of a procedure falls out (_start into
// call_weak_fn in every aarch64 reference; die into checked_div in
// ctrl-aarch64-gcc12-O0; checked_div through a nop into tail in
// ctrl-aarch64-gcc12-O2). On x86-64 it knows them, and its analysis of
// which local procedures return keeps its parses inside their procedures
// in all 26 references; there, too, the instruction before an entry is
// ambiguous. So bloop parses through the ends of extents, in compat mode,
// where instructions have one width.

// fixedWidth reports whether img's instructions all have one length, so
// that the one before an address is known.
func fixedWidth(img *loader.Image) bool {
	ar := isa.For(img.Machine)
	return ar != nil && ar.Align() == ar.MaxLen()
}

// maxPadding bounds the instructions between procedures that fallsInto
// walks back over.
const maxPadding = 16

// fallsInto returns the procedure whose code may fall through into addr:
// the one holding the instruction before it, or before the padding
// (outside every procedure) before it, when those instructions fall
// through.
func fallsInto(img *loader.Image, addr uint64) *loader.Func {
	ar := isa.For(img.Machine)
	n := uint64(ar.MaxLen())
	for k := 0; k < maxPadding && addr >= n; k++ {
		b := img.Bytes(addr-n, addr)
		if uint64(len(b)) != n || !ar.Decode(b, addr-n).Kind.FallsThrough() {
			return nil
		}
		addr -= n
		if f := img.FuncAt(addr); f != nil {
			return f
		}
	}
	return nil
}

// gapAt is the extent of code at t that lies in no procedure: up to the
// next procedure or the end of its section.
func gapAt(img *loader.Image, t uint64) (lo, hi uint64, ok bool) {
	s := img.SectionAt(t)
	if s == nil {
		return 0, 0, false
	}
	hi = s.End()
	i := sort.Search(len(img.Funcs), func(i int) bool { return img.Funcs[i].Addr > t })
	if i < len(img.Funcs) && img.Funcs[i].Addr < hi {
		hi = img.Funcs[i].Addr
	}
	return t, hi, true
}
