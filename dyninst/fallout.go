package dyninst

import (
	"sort"

	"bloop/loader"
)

// Dyninst parses code wherever control flows, extents notwithstanding: code
// that falls through the end of one procedure's symbol (after a call
// Dyninst does not know never returns, and the padding after it, or where
// one assembly function runs into the next) is parsed as that procedure's,
// and hpcstruct writes the next procedure with its gaps only. It knows a
// PLT stub's callee by name only (Policy.NoReturnName; on aarch64 no
// stub's name at all, so every call to exit@plt or abort@plt at the end
// of a procedure falls out: _start into call_weak_fn in every aarch64
// reference), and finds the image's own procedures that never return by
// parsing them (noreturn.go): gcc 11's std::__throw_bad_array_new_length
// ends vector's copy constructor in stl-gcc12-O2, whose parse runs on into
// _Hashtable::clear; libc.so.6's malloc_printerr calls __libc_message,
// which has a reachable ret, and runs on into int_mallinfo; glibc's
// __memmove_chk_* run into __memmove_*. So in compat mode bloop parses
// through the ends of extents on every architecture (cfg.Dyninst.FallOut): which
// procedures another one runs into is read off the parses
// (Facts.RunsOn, pipeline's claimedEntries), never guessed from the bytes
// before an entry, which are ambiguous where instructions vary in length.

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
