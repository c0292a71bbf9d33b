package profile

import (
	"bufio"
	"encoding/gob"
	"fmt"

	"bloop/cache"
	"bloop/loader"
	"bloop/pipeline"
	"bloop/source"
	"bloop/structfile"
)

// indexKind separates the report's entries from structure files in the
// shared cache; bump it when the index or its encoding changes.
const indexKind = "profile scope index 1"

// storedIndex is a scopeIndex flattened for gob: elements once each,
// paths as element numbers, entries as path numbers.
type storedIndex struct {
	Elems   []Elem
	Paths   [][]int32
	Entries []storedEntry
}

type storedEntry struct {
	Lo, Hi uint64
	Path   int32
}

func (x *scopeIndex) store() *storedIndex {
	s := &storedIndex{}
	elemNo := map[*Elem]int32{}
	pathNo := map[*Elem]int32{} // a path is known by its last element
	for _, e := range x.entries {
		if len(e.path) == 0 {
			continue
		}
		last := e.path[len(e.path)-1]
		n, ok := pathNo[last]
		if !ok {
			var p []int32
			for _, el := range e.path {
				k, ok := elemNo[el]
				if !ok {
					k = int32(len(s.Elems))
					elemNo[el] = k
					s.Elems = append(s.Elems, *el)
				}
				p = append(p, k)
			}
			n = int32(len(s.Paths))
			pathNo[last] = n
			s.Paths = append(s.Paths, p)
		}
		s.Entries = append(s.Entries, storedEntry{e.lo, e.hi, n})
	}
	return s
}

func (s *storedIndex) index() (*scopeIndex, error) {
	elems := make([]*Elem, len(s.Elems))
	for i := range s.Elems {
		elems[i] = &s.Elems[i]
	}
	paths := make([][]*Elem, len(s.Paths))
	for i, p := range s.Paths {
		for _, k := range p {
			if k < 0 || int(k) >= len(elems) {
				return nil, fmt.Errorf("element %d of %d", k, len(elems))
			}
			paths[i] = append(paths[i], elems[k])
		}
	}
	x := &scopeIndex{entries: make([]indexEntry, len(s.Entries))}
	for i, e := range s.Entries {
		if e.Path < 0 || int(e.Path) >= len(paths) {
			return nil, fmt.Errorf("path %d of %d", e.Path, len(paths))
		}
		x.entries[i] = indexEntry{e.Lo, e.Hi, paths[e.Path]}
	}
	return x, nil
}

// analyzeModule returns the scope index of a module, from bloop's
// default analysis (what bloop struct writes), through the cache when
// there is one: a report then costs each module's analysis once.
func analyzeModule(c *cache.Cache, img *loader.Image, name string) *scopeIndex {
	finder := &source.Finder{}
	opt := structfile.Options{Pipeline: pipeline.Options{Sources: finder}}
	analyze := func() *scopeIndex {
		mod, _ := pipeline.Analyze(img, opt.Pipeline)
		if mod == nil {
			return nil
		}
		return indexModule(mod, name)
	}
	if c == nil {
		return analyze()
	}
	key, err := structfile.Key(c, img.Path, opt)
	if err != nil {
		return analyze()
	}
	key = cache.Key(indexKind, key, name)
	if f := c.Get(key); f != nil {
		defer f.Close()
		var s storedIndex
		if gob.NewDecoder(bufio.NewReader(f)).Decode(&s) == nil {
			if x, err := s.index(); err == nil {
				return x
			}
		}
		// A damaged entry is recomputed and replaced.
	}
	x := analyze()
	if x == nil {
		return nil
	}
	storeIndex(c, key, x, finder)
	return x
}

// storeIndex writes an index entry; failures only cost the next report
// the analysis.
func storeIndex(c *cache.Cache, key string, x *scopeIndex, finder *source.Finder) {
	e, err := c.Create(key)
	if err != nil {
		return
	}
	w := bufio.NewWriter(e)
	if err := gob.NewEncoder(w).Encode(x.store()); err != nil || w.Flush() != nil {
		e.Abort()
		return
	}
	for _, p := range finder.Probed() {
		if e.DependsOn(p) != nil {
			e.Abort()
			return
		}
	}
	if e.Commit() != nil {
		e.Abort()
	}
}
