package profile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"bloop/cache"
	"bloop/internal/varint"
	"bloop/loader"
	"bloop/pipeline"
	"bloop/source"
	"bloop/structfile"
)

// indexKind separates the report's entries from structure files in the
// shared cache; bump it when the index or its encoding changes.
const indexKind = "profile scope index 2"

// The stored index: a string table, the elements (strings by number),
// the paths (element numbers), and the entries (address deltas and path
// numbers), then the rows of the addresses outside the entries (address
// deltas, line + 1 or 0 for none, file string numbers), all as unsigned
// varints after a magic word. Gob took 0.8 s
// to read python3.11's index of 25 MB; this form is about a quarter of
// that size and decodes from one buffer.
const indexMagic = "bloop scope index 2\n"

// encodeIndex appends x in the stored form to b.
func encodeIndex(x *scopeIndex) []byte {
	b := []byte(indexMagic)
	var strs varint.Strings
	str := strs.Ref
	var elems []uint64 // 8 numbers per element
	elemNo := map[*Elem]uint64{}
	pathNo := map[*Elem]uint64{} // a path is known by its last element
	var paths [][]uint64
	entries := make([]uint64, 0, 3*len(x.entries))
	var prev uint64
	for _, e := range x.entries {
		if len(e.path) == 0 {
			continue
		}
		last := e.path[len(e.path)-1]
		n, ok := pathNo[last]
		if !ok {
			p := make([]uint64, 0, len(e.path))
			for _, el := range e.path {
				k, ok := elemNo[el]
				if !ok {
					k = uint64(len(elems) / 8)
					elemNo[el] = k
					elems = append(elems, uint64(el.Kind), str(el.Name), str(el.Module), str(el.File),
						uint64(el.Line), str(el.CallFile), uint64(el.CallLine), el.Addr)
				}
				p = append(p, k)
			}
			n = uint64(len(paths))
			pathNo[last] = n
			paths = append(paths, p)
		}
		// Entries are sorted by lo: store the gap from the previous hi.
		entries = append(entries, e.lo-prev, e.hi-e.lo, n)
		prev = e.hi
	}
	addrs := make([]uint64, 0, len(x.outside))
	for a := range x.outside {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	outside := make([]uint64, 0, 3*len(addrs))
	prev = 0
	for _, a := range addrs {
		row, line := x.outside[a], uint64(0)
		if row.ok {
			line = uint64(row.line) + 1
		}
		outside = append(outside, a-prev, line, str(row.file))
		prev = a
	}
	b = binary.AppendUvarint(b, uint64(len(strs.List)))
	for _, s := range strs.List {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(len(elems)/8))
	for _, v := range elems {
		b = binary.AppendUvarint(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(paths)))
	for _, p := range paths {
		b = binary.AppendUvarint(b, uint64(len(p)))
		for _, v := range p {
			b = binary.AppendUvarint(b, v)
		}
	}
	for _, vs := range [][]uint64{entries, outside} {
		b = binary.AppendUvarint(b, uint64(len(vs)/3))
		for _, v := range vs {
			b = binary.AppendUvarint(b, v)
		}
	}
	return b
}

// strAt reads a reference to one of strs.
func strAt(r *varint.Reader, strs []string) string {
	if i, ok := r.Ref(len(strs)); ok {
		return strs[i]
	}
	return ""
}

// decodeIndex reads a stored index.
func decodeIndex(b []byte) (*scopeIndex, error) {
	rest, ok := bytes.CutPrefix(b, []byte(indexMagic))
	if !ok {
		return nil, fmt.Errorf("not a stored index")
	}
	r := &varint.Reader{B: rest}
	strs := make([]string, r.Count())
	for i := range strs {
		strs[i] = r.Str()
	}
	elems := make([]Elem, r.Count())
	for i := range elems {
		e := &elems[i]
		e.Kind = ElemKind(r.Uint())
		e.Name, e.Module, e.File = strAt(r, strs), strAt(r, strs), strAt(r, strs)
		e.Line = int(r.Uint())
		e.CallFile = strAt(r, strs)
		e.CallLine = int(r.Uint())
		e.Addr = r.Uint()
	}
	paths := make([][]*Elem, r.Count())
	for i := range paths {
		p := make([]*Elem, r.Count())
		for k := range p {
			j, ok := r.Ref(len(elems))
			if !ok {
				return nil, r.Err
			}
			p[k] = &elems[j]
		}
		paths[i] = p
	}
	x := &scopeIndex{entries: make([]indexEntry, r.Count())}
	var prev uint64
	for i := range x.entries {
		lo := prev + r.Uint()
		hi := lo + r.Uint()
		j, ok := r.Ref(len(paths))
		if !ok {
			return nil, r.Err
		}
		x.entries[i] = indexEntry{lo, hi, paths[j]}
		prev = hi
	}
	prev = 0
	for n := r.Count(); n > 0 && r.Err == nil; n-- {
		if x.outside == nil {
			x.outside = map[uint64]lineRow{}
		}
		a := prev + r.Uint()
		line := r.Uint()
		x.outside[a] = lineRow{}
		if file := strAt(r, strs); line > 0 {
			x.outside[a] = lineRow{file: file, line: int(line) - 1, ok: true}
		}
		prev = a
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	return x, nil
}

// analyzeModule returns the scope index of a module, from bloop's
// default analysis (what bloop struct writes), through the cache when
// there is one: a report then costs each module's analysis once. load
// are the options img was opened with: the key names the debug file
// they find (a fetched one too), as bloop struct's does; fetch, when not
// nil, fetches the sources not found here.
//
// only, when not nil, are the sorted addresses the report needs: only
// the procedures holding them are analysed (each as the whole analysis
// gives it), and what is analysed accrues in an entry of its own (see
// accrued), so that nothing partial is taken for the whole module's
// index (nor for bloop struct's file, whose kind differs) and a report
// of another recording of the module analyses only the procedures no
// report analysed before.
func analyzeModule(c *cache.Cache, img *loader.Image, name string, load loader.Options, fetch source.Fetcher, only []uint64) *scopeIndex {
	finder := &source.Finder{Fetcher: fetch}
	opt := structfile.Options{Load: load, Pipeline: pipeline.Options{Sources: finder, SourceFetcher: fetch}}
	analyze := func(only []uint64) *scopeIndex {
		po := opt.Pipeline
		po.Only = only
		img.LoadDWARF()
		mod, _ := pipeline.Analyze(img, po)
		if mod == nil {
			return nil
		}
		x := indexModule(mod, name)
		// The frames outside the procedures analysed get their line from
		// the line table: kept, a warm report need not read the DWARF.
		for _, a := range only {
			if x.lookup(a) == nil {
				if x.outside == nil {
					x.outside = map[uint64]lineRow{}
				}
				x.outside[a] = lineRow{}
				if row, ok := img.Lines.Lookup(a); ok {
					x.outside[a] = lineRow{file: row.File, line: row.Line, ok: true}
				}
			}
		}
		return x
	}
	if c == nil {
		return analyze(only)
	}
	key, err := structfile.Key(c, img.Path, opt)
	if err != nil {
		return analyze(only)
	}
	whole := cache.Key(indexKind, key, name)
	if x := getIndex(c, whole); x != nil {
		return x // the whole module's index answers any addresses
	}
	if only != nil {
		return accrue(c, cache.Key(indexKind+" of the procedures analysed so far", whole), only, analyze, finder)
	}
	x := analyze(nil)
	if x == nil {
		return nil
	}
	storeIndex(c, whole, x, finder)
	return x
}

// storeIndex writes an index entry; failures only cost the next report
// the analysis.
func storeIndex(c *cache.Cache, key string, x *scopeIndex, finder *source.Finder) {
	writeEntry(c, key, encodeIndex(x), finder.Probed()...)
}

// getIndex reads a stored index; nil when there is none (a damaged entry
// is recomputed and replaced).
func getIndex(c *cache.Cache, key string) *scopeIndex {
	b := readEntry(c, key)
	if b == nil {
		return nil
	}
	x, err := decodeIndex(b)
	if err != nil {
		return nil
	}
	return x
}
