package loader

import (
	"sort"

	"bloop/structure"
)

type procRange struct {
	structure.Range
	p *Subprogram
}

// index lists the procedures' ranges by start. Several units can describe
// the same code (libstdc++'s COW string members, one copy per unit that
// instantiated them); they go in in reverse unit order so that, the sort
// being stable, SubprogramAt's backward walk meets the first unit's: the
// one Dyninst 12.3 reads, whose call_file forms (implicit_const or not)
// decide which call sites hpcstruct leaves <unknown>:0.
func (img *Image) index() {
	img.procIndex = img.procIndex[:0]
	for k := len(img.Procs) - 1; k >= 0; k-- {
		p := img.Procs[k]
		for i, r := range p.Ranges {
			// Thesis 4.3: DWARF procedure ends can run past the next
			// procedure's symbol; a range ends where another symbol starts.
			if f := img.nextFuncStart(r.Lo); f > r.Lo && f < r.Hi {
				r.Hi = f
				p.Ranges[i] = r
			}
			img.procIndex = append(img.procIndex, procRange{r, p})
		}
	}
	sort.SliceStable(img.procIndex, func(i, j int) bool { return img.procIndex[i].Lo < img.procIndex[j].Lo })
}

// SubprogramAt returns the innermost DWARF procedure whose ranges hold addr, or nil.
// Ranges rarely overlap (nested procedures have their own code), so a short
// backward walk from the last range starting at or before addr suffices; the
// latest-starting containing range is the innermost.
func (img *Image) SubprogramAt(addr uint64) *Subprogram {
	i := sort.Search(len(img.procIndex), func(i int) bool { return img.procIndex[i].Lo > addr }) - 1
	for k := 0; i >= 0 && k < 64; i, k = i-1, k+1 {
		if r := img.procIndex[i]; addr < r.Hi {
			return r.p
		}
	}
	return nil
}

// nextFuncStart is the first procedure symbol after addr, or 0.
func (img *Image) nextFuncStart(addr uint64) uint64 {
	i := sort.Search(len(img.Funcs), func(i int) bool { return img.Funcs[i].Addr > addr })
	if i < len(img.Funcs) {
		return img.Funcs[i].Addr
	}
	return 0
}
