package hpcrun

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// sectionAlign is the .hpcrun section alignment.
const sectionAlign = 1024

// Write writes p as a .hpcrun file (version 04.00, the 19-byte nodes of
// hpcrun 2023.08), field by field as hpcrun lays it out: what Parse reads
// of a real profile it writes back byte for byte. bloop report --hpcrun
// writes its measurement directories with it; tests make profiles of
// their own programs, or a real profile pointed at other binaries.
func Write(w io.Writer, p *Profile) error {
	if err := p.writable(); err != nil {
		return fmt.Errorf("hpcrun profile not written: %w", err)
	}
	e := &encoder{}
	var f footer
	sections := []func(){
		func() { e.header(p) },
		func() { e.loadMap(p.LoadMap) },
		func() { e.cct(p.Nodes) },
		func() { e.metrics(p.Metrics) },
		func() { e.idTupleNames() },
		func() { e.values(p) },
	}
	for i, s := range sections {
		if i > 0 {
			e.pad()
		}
		f[2*i] = uint64(len(e.b))
		s()
		f[2*i+1] = uint64(len(e.b))
	}
	if e.err != nil {
		return e.err
	}
	e.pad()
	f[footerWords-2] = uint64(len(e.b))
	f[footerWords-1] = footerMagic
	for _, v := range f {
		e.u64(v)
	}
	_, err := w.Write(e.b)
	return err
}

type encoder struct {
	b   []byte
	err error
}

func (e *encoder) pad() {
	for len(e.b)%sectionAlign != 0 {
		e.b = append(e.b, 0)
	}
}

func (e *encoder) u16(v uint16) { e.b = binary.BigEndian.AppendUint16(e.b, v) }
func (e *encoder) u32(v uint32) { e.b = binary.BigEndian.AppendUint32(e.b, v) }
func (e *encoder) u64(v uint64) { e.b = binary.BigEndian.AppendUint64(e.b, v) }

func (e *encoder) str(s string) {
	if len(s) > math.MaxUint32 {
		e.err = fmt.Errorf("string of %d bytes", len(s))
		return
	}
	e.u32(uint32(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) header(p *Profile) {
	v := p.Version
	if len(v) != 5 {
		v = "04.00"
	}
	e.b = append(e.b, Magic+v+"b"...)
	e.u32(uint32(len(p.Header)))
	for _, nv := range p.Header {
		e.str(nv[0])
		e.str(nv[1])
	}
}

func (e *encoder) loadMap(lms []LoadModule) {
	e.u32(uint32(len(lms)))
	for _, lm := range lms {
		e.u16(lm.ID)
		e.str(lm.Path)
		e.u64(lm.Flags)
	}
}

func (e *encoder) cct(nodes []Node) {
	e.u64(uint64(len(nodes)))
	for _, n := range nodes {
		e.u32(n.ID)
		e.u32(n.Parent)
		e.u16(n.Module)
		e.u64(n.Offset)
		if n.Unwound {
			e.b = append(e.b, 1)
		} else {
			e.b = append(e.b, 0)
		}
	}
}

func (e *encoder) metrics(ms []Metric) {
	e.u32(uint32(len(ms)))
	for _, m := range ms {
		e.str(m.Name)
		e.str(m.Description)
		var flags [16]byte
		flags[0] = metricRaw
		flags[2] = valFmtInt
		if m.Real {
			flags[2] = valFmtReal
		}
		flags[6] = b2u(m.Show)
		flags[7] = b2u(m.ShowPercent)
		e.b = append(e.b, flags[:]...)
		e.u64(m.Period)
		e.str(m.Formula)
		e.str(m.Format)
		e.u16(uint16(b2u(m.Frequency)))
		e.u16(uint16(b2u(m.Multiplexed)))
		e.u64(math.Float64bits(m.ThresholdMean))
		e.u64(m.Samples)
	}
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// idTupleNames writes the dictionary of id-tuple kinds hpcrun writes.
func (e *encoder) idTupleNames() {
	e.u16(uint16(len(KindNames)))
	for i, n := range KindNames {
		e.u16(uint16(i))
		e.str(n)
	}
}

// values writes the sparse values, which must be grouped by node.
func (e *encoder) values(p *Profile) {
	e.u16(uint16(len(p.IDTuple)))
	for _, t := range p.IDTuple {
		e.u16(t.Kind)
		e.u64(t.Physical)
		e.u64(t.Logical)
	}
	e.u64(uint64(len(p.Values)))
	var starts [][2]uint64
	for i, v := range p.Values {
		if i == 0 || v.Node != p.Values[i-1].Node {
			starts = append(starts, [2]uint64{uint64(v.Node), uint64(i)})
		}
	}
	e.u32(uint32(len(starts)))
	for _, v := range p.Values {
		e.u64(v.Bits)
		e.u16(v.Metric)
	}
	for _, s := range starts {
		e.u32(uint32(s[0]))
		e.u64(s[1])
	}
	e.u32(lastNodeEnd)
	e.u64(uint64(len(p.Values)))
}

// writable checks what the format cannot hold or hpcprof would misread:
// counts past their fields' widths, children before their parents,
// values of nodes or metrics that do not exist, a node's values apart.
func (p *Profile) writable() error {
	if err := p.check(); err != nil {
		return err
	}
	if len(p.IDTuple) > math.MaxUint16 || len(p.Metrics) > math.MaxUint16 || len(p.LoadMap) > math.MaxUint32 {
		return fmt.Errorf("%d id-tuple levels, %d metrics, %d load modules: too many", len(p.IDTuple), len(p.Metrics), len(p.LoadMap))
	}
	done := map[uint32]bool{}
	for i, v := range p.Values {
		if i > 0 && v.Node != p.Values[i-1].Node {
			done[p.Values[i-1].Node] = true
		}
		if done[v.Node] {
			return fmt.Errorf("metric values: node %d's values are not together", v.Node)
		}
	}
	return nil
}
