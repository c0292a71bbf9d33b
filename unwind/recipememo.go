package unwind

import (
	"bloop/internal/varint"
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
)

// The recipes of the procedures a run computed are kept in the memo too:
// each is a function of the module and the procedure alone (Recipes), so
// a stored one is the one a run would compute. The entry holds those of
// every run so far; a run that computed new ones stores the union.

const (
	memoRecipes  = "unwind recipes 1"
	recipesMagic = "bloop unwind recipes 1\n"
)

// A stored recipe's flags.
const (
	recipeFlagBP = 1 << iota
	recipeFlagRAInDI
	recipeFlagRAInLR
	recipeFlagAltRA
)

// loadRecipes reads the memo's recipes into m.done, once; m.mu is held.
func (m *Module) loadRecipes() {
	if m.recipesLoaded || m.memo == nil {
		return
	}
	m.recipesLoaded = true
	b := m.memo.Get(memoRecipes)
	if b == nil {
		return
	}
	got, err := decodeRecipes(b, m.procs)
	if err != nil {
		return // damaged: computed afresh and replaced
	}
	for i, rs := range got {
		if _, ok := m.done[i]; !ok {
			m.done[i] = rs
		}
	}
	m.stored = len(got)
}

// SaveRecipes keeps the recipes computed so far in the memo, when there
// are some the memo does not hold: call it once the run is over.
func (m *Module) SaveRecipes() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.memo == nil || len(m.done) == m.stored {
		return
	}
	m.loadRecipes() // a run that computed none kept none: keep the memo's too
	if b := encodeRecipes(m.done, m.procs); b != nil {
		m.memo.Put(memoRecipes, b)
		m.stored = len(m.done)
	}
}

// encodeRecipes: the procedures by index in order (the gap from the
// previous index), each with its recipes: the first's start as a signed
// offset from the procedure's, then each one's gap from the previous
// end, length, and fields. nil when a recipe list is not sorted.
func encodeRecipes(done map[int][]Recipe, procs []Proc) []byte {
	idx := make([]int, 0, len(done))
	for i := range done {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	b := []byte(recipesMagic)
	b = binary.AppendUvarint(b, uint64(len(idx)))
	prevIdx := 0
	for _, i := range idx {
		rs := done[i]
		b = binary.AppendUvarint(b, uint64(i-prevIdx))
		prevIdx = i
		b = binary.AppendUvarint(b, uint64(len(rs)))
		var end uint64
		for k, r := range rs {
			if r.Hi < r.Lo || k > 0 && r.Lo < end {
				return nil
			}
			if k == 0 {
				b = binary.AppendVarint(b, int64(r.Lo-procs[i].Lo))
			} else {
				b = binary.AppendUvarint(b, r.Lo-end)
			}
			end = r.Hi
			b = appendRecipe(binary.AppendUvarint(b, r.Hi-r.Lo), r)
		}
	}
	return b
}

func appendRecipe(b []byte, r Recipe) []byte {
	var flags byte
	if r.BPSaved {
		flags |= recipeFlagBP
	}
	if r.RAInDI {
		flags |= recipeFlagRAInDI
	}
	if r.RAInLR {
		flags |= recipeFlagRAInLR
	}
	if r.AltRA {
		flags |= recipeFlagAltRA
	}
	b = append(b, flags, byte(r.CFA), byte(r.AltCFA), r.RABits)
	for _, v := range []int64{r.CFAOff, r.RAOff, r.BPOff, r.AltCFAOff, r.AltRAOff} {
		b = binary.AppendVarint(b, v)
	}
	return b
}

// decodeRecipes reads stored recipes of the procedures procs.
func decodeRecipes(b []byte, procs []Proc) (map[int][]Recipe, error) {
	rest, ok := bytes.CutPrefix(b, []byte(recipesMagic))
	if !ok {
		return nil, fmt.Errorf("not stored recipes")
	}
	r := &varint.Reader{B: rest}
	out := map[int][]Recipe{}
	i := 0
	for n := r.Count(); n > 0 && r.Err == nil; n-- {
		i += int(r.Uint())
		if i < 0 || i >= len(procs) {
			r.Fail("procedure %d of %d", i, len(procs))
			break
		}
		var rs []Recipe
		var end uint64
		for k := r.Count(); k > 0 && r.Err == nil; k-- {
			var lo uint64
			if rs == nil {
				lo = procs[i].Lo + uint64(r.Int())
			} else {
				lo = end + r.Uint()
			}
			rec := Recipe{Lo: lo, Hi: lo + r.Uint()}
			readRecipe(r, &rec)
			end = rec.Hi
			rs = append(rs, rec)
		}
		out[i] = rs
	}
	return out, r.End()
}

// readRecipe reads a recipe's fields (appendRecipe's) into rec.
func readRecipe(r *varint.Reader, rec *Recipe) {
	if len(r.B) < 4 {
		r.Fail("truncated")
		return
	}
	flags := r.B[0]
	rec.CFA, rec.AltCFA, rec.RABits = Reg(r.B[1]), Reg(r.B[2]), r.B[3]
	r.B = r.B[4:]
	rec.BPSaved, rec.RAInDI = flags&recipeFlagBP != 0, flags&recipeFlagRAInDI != 0
	rec.RAInLR, rec.AltRA = flags&recipeFlagRAInLR != 0, flags&recipeFlagAltRA != 0
	for _, v := range []*int64{&rec.CFAOff, &rec.RAOff, &rec.BPOff, &rec.AltCFAOff, &rec.AltRAOff} {
		*v = r.Int()
	}
}
