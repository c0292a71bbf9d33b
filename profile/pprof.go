package profile

import (
	"compress/gzip"
	"fmt"
	"io"
	"sort"
	"strings"

	"bloop/sample"
)

// pprofBuilder collects the profile.proto messages while samples are
// attributed. Each frame becomes a Location whose Lines are its inlined
// calls and loops, innermost first (loops appear as functions named
// "loop at file:line"), so `go tool pprof` shows them.
type pprofBuilder struct {
	strs    map[string]int64
	strList []string
	funcs   map[[2]string]uint64
	funcMsg [][]byte
	locs    map[locKey]uint64
	locMsg  [][]byte
	maps    map[*Module]uint64
	mapMods []*Module
	samples map[string]*pprofSample
	order   []string
}

type locKey struct {
	mod  *Module
	addr uint64
}

type pprofSample struct {
	locs  []uint64
	tid   uint32
	count int64
}

func newPprofBuilder() *pprofBuilder {
	b := &pprofBuilder{strs: map[string]int64{}, funcs: map[[2]string]uint64{}, locs: map[locKey]uint64{},
		maps: map[*Module]uint64{}, samples: map[string]*pprofSample{}}
	b.str("")
	return b
}

func (b *pprofBuilder) str(s string) int64 {
	if i, ok := b.strs[s]; ok {
		return i
	}
	i := int64(len(b.strList))
	b.strs[s] = i
	b.strList = append(b.strList, s)
	return i
}

func (b *pprofBuilder) function(name, file string) uint64 {
	k := [2]string{name, file}
	if id, ok := b.funcs[k]; ok {
		return id
	}
	id := uint64(len(b.funcMsg) + 1)
	b.funcs[k] = id
	var m pbuf
	m.uint(1, id)
	m.int(2, b.str(name))
	m.int(3, b.str(name))
	m.int(4, b.str(file))
	b.funcMsg = append(b.funcMsg, m.b)
	return id
}

// location returns the Location of a frame, with one Line per inlined
// call or loop of its scope path.
func (b *pprofBuilder) location(f Frame, path []*Elem) uint64 {
	k := locKey{f.Mod, f.Addr}
	if id, ok := b.locs[k]; ok {
		return id
	}
	id := uint64(len(b.locMsg) + 1)
	b.locs[k] = id
	mid, ok := b.maps[f.Mod]
	if !ok {
		mid = uint64(len(b.mapMods) + 1)
		b.maps[f.Mod] = mid
		b.mapMods = append(b.mapMods, f.Mod)
	}
	var m pbuf
	m.uint(1, id)
	m.uint(2, mid)
	m.uint(3, f.Addr)
	line := 0
	if n := len(path); n > 0 && path[n-1].Kind == ElemStmt {
		line = path[n-1].Line
		path = path[:n-1]
	}
	for i := len(path) - 1; i >= 0; i-- {
		e := path[i]
		var ln pbuf
		switch e.Kind {
		case ElemLoop:
			ln.uint(1, b.function(e.Label(), e.File))
			ln.int(2, int64(line))
			line = e.Line
		case ElemInline:
			ln.uint(1, b.function(e.Name, e.File))
			ln.int(2, int64(line))
			line = e.CallLine
		default:
			ln.uint(1, b.function(e.Name, e.File))
			ln.int(2, int64(line))
		}
		m.msg(4, ln.b)
	}
	b.locMsg = append(b.locMsg, m.b)
	return id
}

// add records one sample's stack, leaf first.
func (b *pprofBuilder) add(p *Profile, s *sample.Sample, frames []Frame, _ []*Elem, out Outcome) {
	locs := make([]uint64, 0, len(frames)+1)
	for _, f := range frames {
		locs = append(locs, b.location(f, p.scopesOf(f)))
	}
	if out != Complete {
		k := locKey{nil, 0}
		id, ok := b.locs[k]
		if !ok {
			id = uint64(len(b.locMsg) + 1)
			b.locs[k] = id
			var m, ln pbuf
			m.uint(1, id)
			ln.uint(1, b.function(partial.Name, ""))
			m.msg(4, ln.b)
			b.locMsg = append(b.locMsg, m.b)
		}
		locs = append(locs, id)
	}
	key := fmt.Sprint(s.Tid, locs)
	ps := b.samples[key]
	if ps == nil {
		ps = &pprofSample{locs: locs, tid: s.Tid}
		b.samples[key] = ps
		b.order = append(b.order, key)
	}
	ps.count++
}

// WritePprof writes the profile as gzip-compressed profile.proto.
func (p *Profile) WritePprof(w io.Writer) error {
	b := p.pprof
	period := int64(1_000_000)
	if p.Meta.Freq > 0 {
		period = int64(1e9 / float64(p.Meta.Freq))
	}
	var out pbuf
	for _, vt := range [][2]string{{"samples", "count"}, {"cpu", "nanoseconds"}} {
		var m pbuf
		m.int(1, b.str(vt[0]))
		m.int(2, b.str(vt[1]))
		out.msg(1, m.b)
	}
	sort.SliceStable(b.order, func(i, j int) bool { return b.samples[b.order[i]].count > b.samples[b.order[j]].count })
	threadKey := b.str("thread")
	for _, k := range b.order {
		s := b.samples[k]
		var m, vals, ids, lab pbuf
		for _, l := range s.locs {
			ids.varint(l)
		}
		m.msg(1, ids.b)
		vals.varint(uint64(s.count))
		vals.varint(uint64(s.count * period))
		m.msg(2, vals.b)
		lab.int(1, threadKey)
		lab.int(3, int64(s.tid))
		m.msg(3, lab.b)
		out.msg(2, m.b)
	}
	for i, mod := range b.mapMods {
		var m pbuf
		m.uint(1, uint64(i+1))
		m.uint(3, 1<<63) // file addresses: each mapping spans the whole file
		m.int(5, b.str(mod.Path))
		m.uint(7, 1)
		m.uint(8, 1)
		m.uint(9, 1)
		m.uint(10, 1)
		out.msg(3, m.b)
	}
	for _, l := range b.locMsg {
		out.msg(4, l)
	}
	for _, f := range b.funcMsg {
		out.msg(5, f)
	}
	var pt pbuf
	pt.int(1, b.str("cpu"))
	pt.int(2, b.str("nanoseconds"))
	comment := b.str("bloop report of " + strings.Join(p.Meta.Command, " "))
	// The string table goes last: everything above has added to it.
	for _, s := range b.strList {
		out.bytes(6, []byte(s))
	}
	out.int(9, int64(p.Meta.StartNanos))
	out.int(10, int64(p.Stats.DurationNanos))
	out.msg(11, pt.b)
	out.int(12, period)
	out.int(13, comment)
	zw := gzip.NewWriter(w)
	if _, err := zw.Write(out.b); err != nil {
		return err
	}
	return zw.Close()
}

// pbuf encodes protocol-buffer fields (profile.proto needs only varints
// and length-delimited fields).
type pbuf struct{ b []byte }

func (p *pbuf) varint(v uint64) {
	for v >= 0x80 {
		p.b = append(p.b, byte(v)|0x80)
		v >>= 7
	}
	p.b = append(p.b, byte(v))
}

func (p *pbuf) uint(field int, v uint64) {
	if v == 0 {
		return
	}
	p.varint(uint64(field) << 3)
	p.varint(v)
}

func (p *pbuf) int(field int, v int64) { p.uint(field, uint64(v)) }

func (p *pbuf) bytes(field int, b []byte) {
	p.varint(uint64(field)<<3 | 2)
	p.varint(uint64(len(b)))
	p.b = append(p.b, b...)
}

func (p *pbuf) msg(field int, b []byte) { p.bytes(field, b) }
