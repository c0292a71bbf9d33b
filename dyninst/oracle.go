package dyninst

import (
	"sort"
	"strings"
)

// The procedure table's answers to cfg.Build (cfg.Oracle): a Parse gives
// them from its image's procedures.

// Region tells which code outside a procedure's extent its CFG continues
// into, as Dyninst parses it: hot/cold split parts (foo.cold) reached by
// a jump, and any procedure reached by a call to the next instruction.
// Such code appears in both procedures, as in hpcstruct. Under a policy,
// also code no procedure starts at: Dyninst parses it as the jumper's own
// (ppc64's _start branches to __libc_start_main's PLT stub, which no call
// makes a procedure: loader.Options.DyninstStubs).
func (ps *Parse) Region(t uint64, callNext bool) (uint64, uint64, bool) {
	img := ps.img
	f := img.FuncAt(t)
	if ps.policy != nil && f != nil && f.PLT && t != f.Addr {
		return t, f.End, true
	}
	if f == nil && callNext {
		return gapAt(img, t) // padding code falls into (fallout.go)
	}
	if ps.policy != nil && f == nil && img.IsCode(t) {
		i := sort.Search(len(img.Funcs), func(i int) bool { return img.Funcs[i].Addr > t })
		end := img.SectionAt(t).End()
		if i < len(img.Funcs) && img.Funcs[i].Addr < end {
			end = img.Funcs[i].Addr
		}
		return t, end, true
	}
	if f == nil || f.PLT {
		return 0, 0, false
	}
	// A jump to a procedure's entry is a tail call, even into a .cold part.
	if callNext || strings.Contains(f.Name, ".cold") && t != f.Addr {
		return f.Addr, f.End, true
	}
	return 0, 0, false
}

// Foreign is the procedure a jump-table entry points into, which Dyninst
// parses as the jumping procedure's own code (code in no procedure is
// Region's).
func (ps *Parse) Foreign(t uint64) (lo, hi uint64, ok bool) {
	if f := ps.img.FuncAt(t); f != nil && !f.PLT {
		return f.Addr, f.End, true
	}
	return 0, 0, false
}

// JumpInto is Foreign for a direct jump, which enters another procedure's
// code past its entry (or ppc64 local entry); a jump to an entry is a
// tail call.
func (ps *Parse) JumpInto(t uint64) (lo, hi uint64, ok bool) {
	if f := ps.img.FuncAt(t); f != nil && (t == f.Addr || t == f.LocalEntry) {
		return 0, 0, false
	}
	return ps.Foreign(t)
}

// Called reports whether a direct call somewhere in the image enters a
// procedure at t (callTargets); never under no policy, which does not ask.
func (ps *Parse) Called(t uint64) bool {
	return ps.callers != nil && ps.callers.called(t)
}
