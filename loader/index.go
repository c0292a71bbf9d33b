package loader

import "sort"

type procRange struct {
	Range
	p *Subprogram
}

func (img *Image) index() {
	img.procIndex = img.procIndex[:0]
	for _, p := range img.Procs {
		for _, r := range p.Ranges {
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
