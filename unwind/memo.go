package unwind

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"bloop/internal/varint"
	"bloop/loader"
)

// Memo keeps, between runs, what a module's unwinding needs that is the
// same in every run on the same image: the procedure bounds (a stripped
// module's take a sweep of all its code to infer), which procedures jump
// into which (a sweep of every procedure), and the recipes of the
// procedures computed (recipememo.go). All are functions of the image
// alone (a procedure's recipes of the image and the procedure: Recipes),
// so a stored copy gives the same recipes as computing them afresh. It is
// the loader's Memo: one memo of a module serves both.
type Memo = loader.Memo

// The kinds a Memo is asked for; bump them when the encodings (or what
// the bounds or jumps are computed from) change.
const (
	memoBounds = "unwind bounds 1"
	memoJumps  = "unwind jumps between procedures 1"
)

// boundsMagic and jumpsMagic start the stored forms: unsigned varints.
const (
	boundsMagic = "bloop unwind bounds 1\n"
	jumpsMagic  = "bloop unwind jumps 1\n"
)

// SetMemo makes m keep its bounds and jumps in memo; call it before use.
func (m *Module) SetMemo(memo Memo) { m.memo = memo }

// loadBounds sets the bounds from the memo; false when it has none.
func (m *Module) loadBounds() bool {
	if m.memo == nil {
		return false
	}
	return m.boundsFrom(m.memo.Get(memoBounds))
}

// boundsFrom takes the bounds stored in b; false when there are none or
// they are damaged (then they are computed afresh and replaced).
func (m *Module) boundsFrom(b []byte) bool {
	if b == nil {
		return false
	}
	ps, byName, err := decodeBounds(b)
	if err != nil {
		return false
	}
	m.procs, m.byName = ps, byName
	return true
}

// LoadBoundsAhead reads the procedure bounds the memo holds now, on a
// goroutine of its own, so that the first sample or scope that needs
// them does not wait for them; it computes nothing (a module whose bounds
// were never stored may never be sampled: they are computed when needed).
// A warm report read libc's bounds (227 KB) during its pass over the
// samples and libstdc++'s (605 KB) while placing them, 2 ms of one core.
func (m *Module) LoadBoundsAhead() {
	if m.memo != nil {
		go m.loadBoundsAhead()
	}
}

// loadBoundsAhead is LoadBoundsAhead's goroutine.
func (m *Module) loadBoundsAhead() {
	b := m.memo.Get(memoBounds)
	if b == nil {
		return
	}
	m.boundsOnce.Do(func() {
		if !m.boundsFrom(b) {
			m.computeBounds()
		}
	})
}

func (m *Module) storeBounds() {
	if m.memo != nil {
		m.memo.Put(memoBounds, encodeBounds(m.procs, m.byName))
	}
}

// jumps returns the jumps between procedures, through the memo.
func (m *Module) jumps() map[int][]int {
	if m.memo != nil {
		if b := m.memo.Get(memoJumps); b != nil {
			if x, err := decodeJumps(b, len(m.procs)); err == nil {
				return x
			}
		}
	}
	x := m.jumpsBetween()
	if m.memo != nil {
		m.memo.Put(memoJumps, encodeJumps(x))
	}
	return x
}

// encodeBounds: the procedures (start gap, length, inferred, name) then
// the names by which cold parts find their hot part (with aliases), in
// name order so equal bounds give equal bytes.
func encodeBounds(ps []Proc, byName map[string]int) []byte {
	b := []byte(boundsMagic)
	b = binary.AppendUvarint(b, uint64(len(ps)))
	var prev uint64
	for _, p := range ps {
		inf := uint64(0)
		if p.Inferred {
			inf = 1
		}
		b = binary.AppendUvarint(b, p.Lo-prev)
		b = binary.AppendUvarint(b, p.Hi-p.Lo)
		b = binary.AppendUvarint(b, inf)
		b = appendString(b, p.Name)
		prev = p.Lo
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, n := range names {
		b = appendString(b, n)
		b = binary.AppendUvarint(b, uint64(byName[n]))
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func decodeBounds(b []byte) ([]Proc, map[string]int, error) {
	rest, ok := bytes.CutPrefix(b, []byte(boundsMagic))
	if !ok {
		return nil, nil, fmt.Errorf("not stored bounds")
	}
	r := &varint.Reader{B: rest}
	ps := make([]Proc, r.Count())
	var prev uint64
	for i := range ps {
		lo := prev + r.Uint()
		ps[i] = Proc{Lo: lo, Hi: lo + r.Uint(), Inferred: r.Uint() == 1, Name: r.Str()}
		prev = lo
	}
	byName := map[string]int{}
	for n := r.Count(); n > 0 && r.Err == nil; n-- {
		name := r.Str()
		if i := r.Uint(); i < uint64(len(ps)) {
			byName[name] = int(i)
		} else {
			r.Fail("procedure %d of %d", i, len(ps))
		}
	}
	return ps, byName, r.End()
}

// encodeJumps: for each target procedure in order, the procedures
// jumping into it in the order the sweep found them (the order recipes
// are computed in).
func encodeJumps(x map[int][]int) []byte {
	b := []byte(jumpsMagic)
	keys := make([]int, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(k))
		b = binary.AppendUvarint(b, uint64(len(x[k])))
		for _, v := range x[k] {
			b = binary.AppendUvarint(b, uint64(v))
		}
	}
	return b
}

// decodeJumps reads stored jumps between nprocs procedures.
func decodeJumps(b []byte, nprocs int) (map[int][]int, error) {
	rest, ok := bytes.CutPrefix(b, []byte(jumpsMagic))
	if !ok {
		return nil, fmt.Errorf("not stored jumps")
	}
	r := &varint.Reader{B: rest}
	x := map[int][]int{}
	proc := func() int {
		v := r.Uint()
		if v >= uint64(nprocs) {
			r.Fail("procedure %d of %d", v, nprocs)
			return 0
		}
		return int(v)
	}
	for n := r.Count(); n > 0 && r.Err == nil; n-- {
		k := proc()
		vs := make([]int, r.Count())
		for i := range vs {
			vs[i] = proc()
		}
		x[k] = vs
	}
	return x, r.End()
}
