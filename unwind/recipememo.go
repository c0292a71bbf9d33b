package unwind

import (
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
	r := &varints{b: rest}
	out := map[int][]Recipe{}
	i := 0
	for n := r.count(); n > 0 && r.err == nil; n-- {
		i += int(r.uint())
		if i < 0 || i >= len(procs) {
			r.fail("procedure %d of %d", i, len(procs))
			break
		}
		var rs []Recipe
		var end uint64
		for k := r.count(); k > 0 && r.err == nil; k-- {
			var lo uint64
			if rs == nil {
				lo = procs[i].Lo + uint64(r.int())
			} else {
				lo = end + r.uint()
			}
			rec := Recipe{Lo: lo, Hi: lo + r.uint()}
			r.recipe(&rec)
			end = rec.Hi
			rs = append(rs, rec)
		}
		out[i] = rs
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("%d bytes after the end", len(r.b))
	}
	return out, r.err
}

func (r *varints) int() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("truncated")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// recipe reads a recipe's fields (appendRecipe's) into rec.
func (r *varints) recipe(rec *Recipe) {
	if len(r.b) < 4 {
		r.fail("truncated")
		return
	}
	flags := r.b[0]
	rec.CFA, rec.AltCFA, rec.RABits = Reg(r.b[1]), Reg(r.b[2]), r.b[3]
	r.b = r.b[4:]
	rec.BPSaved, rec.RAInDI = flags&recipeFlagBP != 0, flags&recipeFlagRAInDI != 0
	rec.RAInLR, rec.AltRA = flags&recipeFlagRAInLR != 0, flags&recipeFlagAltRA != 0
	for _, v := range []*int64{&rec.CFAOff, &rec.RAOff, &rec.BPOff, &rec.AltCFAOff, &rec.AltRAOff} {
		*v = r.int()
	}
}
