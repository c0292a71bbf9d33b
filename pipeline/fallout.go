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
// where instructions have one width (aarch64); on x86-64 and ppc64le only
// after a call through a PLT stub whose callee Dyninst does not know never
// returns (gcc 11's std::__throw_bad_array_new_length ends vector's copy
// constructor in stl-gcc12-O2, whose parse runs on into _Hashtable::clear,
// written empty by hpcstruct, on both), since it knows a stub's callee by
// name only and finds the image's own noreturn procedures by parsing them
// (fallOutCall).

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
func fallsInto(img *loader.Image, addr uint64, anyWord bool) *loader.Func {
	ar := isa.For(img.Machine)
	n := uint64(ar.MaxLen())
	for k := 0; k < maxPadding && addr >= n; k++ {
		b := img.Bytes(addr-n, addr)
		if uint64(len(b)) != n {
			return nil
		}
		// With anyWord (cfg.Options.AnyWord) a word that does not decode
		// falls through too: the traceback table after a ppc64 procedure.
		if k := ar.Decode(b, addr-n).Kind; !k.FallsThrough() && !(anyWord && k == isa.Invalid) {
			return nil
		}
		addr -= n
		if f := img.FuncAt(addr); f != nil {
			return f
		}
	}
	return nil
}

// fallOutCall is cfg.Options.FallOutCall on x86-64: a call through a PLT
// stub whose callee is not known never to return.
func (pl *plan) fallOutCall(t uint64) bool {
	f := pl.img.FuncAt(t)
	return f != nil && f.PLT && !pl.noret(t)
}

// fallsIntoAfterCall is fallsInto where parses fall out after calls
// through stubs only (fallOutCall): the procedure before addr when its
// code ends with such a call and only code that falls through lies
// between it and addr. On x86-64 that is a 5-byte call at the end of its
// extent (instructions before an address are ambiguous there); on ppc64,
// whose instructions have one width but for the rare prefixed ones, the
// walk goes back over the TOC restore, the traceback table (anyWord) and
// the padding to the call.
func (pl *plan) fallsIntoAfterCall(addr uint64) *loader.Func {
	img := pl.img
	ar := isa.For(img.Machine)
	if w := uint64(ar.Align()); w > 1 {
		for k := 0; k < 2*maxPadding && addr >= w; k++ {
			addr -= w
			in := ar.Decode(img.Bytes(addr, addr+w), addr)
			if in.Kind == isa.Call {
				if f := img.FuncAt(addr); f != nil && !f.PLT && pl.fallOutCall(in.Target) {
					return f
				}
				return nil
			}
			if !in.Kind.FallsThrough() && !(pl.anyWord() && in.Kind == isa.Invalid) {
				return nil
			}
		}
		return nil
	}
	i := sort.Search(len(img.Funcs), func(i int) bool { return img.Funcs[i].Addr >= addr }) - 1
	if i < 0 || img.Funcs[i].PLT || img.Funcs[i].End > addr || img.Funcs[i].End < img.Funcs[i].Addr+5 {
		return nil
	}
	f := img.Funcs[i]
	in := ar.Decode(img.Bytes(f.End-5, f.End), f.End-5)
	if in.Kind != isa.Call || in.Len != 5 || !pl.fallOutCall(in.Target) {
		return nil
	}
	for a := f.End; a < addr; a += uint64(in.Len) {
		in = ar.Decode(img.Bytes(a, addr), a)
		if in.Len <= 0 || !in.Kind.FallsThrough() || in.Kind == isa.Invalid {
			return nil
		}
	}
	return f
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
