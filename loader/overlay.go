package loader

import (
	"io"
	"sort"
)

// overlay is a file with some of its bytes replaced, read through
// io.ReaderAt: how a cubin is shown to debug/elf and to the section reader
// as the linked image it would be, without copying or forking either.
type overlay struct {
	io.ReaderAt
	patches []patch // sorted by off, disjoint
}

// patch replaces the bytes at off with b.
type patch struct {
	off int64
	b   []byte
}

func (p patch) end() int64 { return p.off + int64(len(p.b)) }

// newOverlay sorts ps and drops those that overlap an earlier one (only
// corrupt relocations overlap), returning how many it dropped.
func newOverlay(r io.ReaderAt, ps []patch) (*overlay, int) {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].off < ps[j].off })
	out := ps[:0]
	dropped := 0
	for _, p := range ps {
		if p.off < 0 || len(out) > 0 && p.off < out[len(out)-1].end() {
			dropped++
			continue
		}
		out = append(out, p)
	}
	return &overlay{ReaderAt: r, patches: out}, dropped
}

func (o *overlay) ReadAt(b []byte, off int64) (int, error) {
	n, err := o.ReaderAt.ReadAt(b, off)
	end := off + int64(n)
	i := sort.Search(len(o.patches), func(i int) bool { return o.patches[i].end() > off })
	for ; i < len(o.patches) && o.patches[i].off < end; i++ {
		p := o.patches[i]
		lo, hi := max(p.off, off), min(p.end(), end)
		copy(b[lo-off:hi-off], p.b[lo-p.off:hi-p.off])
	}
	return n, err
}
