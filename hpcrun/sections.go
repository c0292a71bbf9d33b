package hpcrun

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The footer: the start and end of each section, the footer's start and
// a magic number, 14 u64 in all.
const (
	footerWords = 14
	footerSize  = footerWords * 8
	footerMagic = 0x48504352554E736D // "HPCRUNsm"
)

// Sections in file order, as indexed in the footer.
const (
	secHeader = iota
	secLoadMap
	secCCT
	secMetrics
	secIDTupleNames
	secValues
	numSections
)

// lastNodeEnd ends a value section's node index ("end!").
const lastNodeEnd = 0x656E6421

type footer [footerWords]uint64

func (f *footer) section(data []byte, i int) []byte { return data[f[2*i]:f[2*i+1]] }

// headSize is the file's start the footer is checked with: the magic,
// the version and the endianness byte.
const headSize = len(Magic) + 6

func parseFooter(data []byte) (*footer, error) {
	return footerOf(data[:min(len(data), headSize)], data[max(len(data)-footerSize, 0):], int64(len(data)))
}

// footerOf reads the footer of a file of size bytes from its first
// headSize bytes and its last footerSize (all of a shorter file).
func footerOf(head, foot []byte, size int64) (*footer, error) {
	if len(head) < headSize || string(head[:len(Magic)]) != Magic {
		return nil, fmt.Errorf("not an hpcrun profile")
	}
	if size < int64(headSize+footerSize) {
		return nil, fmt.Errorf("truncated hpcrun profile (no footer)")
	}
	var f footer
	for i := range f {
		f[i] = binary.BigEndian.Uint64(foot[8*i:])
	}
	if f[footerWords-1] != footerMagic {
		return nil, fmt.Errorf("hpcrun profile version %q: no footer (unfinished or truncated file?)", head[len(Magic):len(Magic)+5])
	}
	limit := uint64(size - footerSize)
	for i := 0; i < numSections; i++ {
		if lo, hi := f[2*i], f[2*i+1]; lo > hi || hi > limit {
			return nil, fmt.Errorf("section %d bounds [%#x, %#x) outside the file", i, lo, hi)
		}
	}
	return &f, nil
}

// reader decodes big-endian fields; the first error sticks, and later
// reads return zeros.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.err = fmt.Errorf("truncated at %#x (%d bytes wanted, %d left)", r.off, n, len(r.b)-r.off)
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) u8() uint8 {
	if s := r.take(1); s != nil {
		return s[0]
	}
	return 0
}

func (r *reader) u16() uint16 {
	if s := r.take(2); s != nil {
		return binary.BigEndian.Uint16(s)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if s := r.take(4); s != nil {
		return binary.BigEndian.Uint32(s)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if s := r.take(8); s != nil {
		return binary.BigEndian.Uint64(s)
	}
	return 0
}

func (r *reader) str() string { return string(r.take(int(r.u32()))) }

func (r *reader) left() int { return len(r.b) - r.off }

// count reads a count of items of at least size bytes each, refused when
// the section cannot hold that many (so a corrupt count allocates nothing).
func (r *reader) count(n uint64, size int) int {
	if r.err == nil && n > uint64(r.left()/size) {
		r.err = fmt.Errorf("%d entries of %d bytes in %d bytes", n, size, r.left())
		return 0
	}
	return int(n)
}

// done reports the first error, or bytes left over: every section must
// end where the footer says.
func (r *reader) done() error {
	if r.err == nil && r.off != len(r.b) {
		return fmt.Errorf("ends at %#x, the footer says %#x", r.off, len(r.b))
	}
	return r.err
}

func parseHeader(b []byte) ([][2]string, error) {
	r := &reader{b: b}
	if string(r.take(len(Magic))) != Magic {
		return nil, fmt.Errorf("no magic")
	}
	r.take(5) // version
	if e := r.u8(); r.err == nil && e != 'b' {
		return nil, fmt.Errorf("endianness %q, want 'b'", e)
	}
	n := r.count(uint64(r.u32()), 8)
	var nvs [][2]string
	for i := 0; i < n && r.err == nil; i++ {
		name := r.str()
		nvs = append(nvs, [2]string{name, r.str()})
	}
	return nvs, r.done()
}

func parseLoadMap(b []byte) ([]LoadModule, error) {
	r := &reader{b: b}
	n := r.count(uint64(r.u32()), 14)
	var lms []LoadModule
	for i := 0; i < n && r.err == nil; i++ {
		var lm LoadModule
		lm.ID = r.u16()
		lm.Path = r.str()
		lm.Flags = r.u64()
		lms = append(lms, lm)
	}
	return lms, r.done()
}

// parseCCT reads the nodes. hpcrun 2023.08 ends each with an "unwound"
// byte; earlier writers of 04.00 did not: the section's size tells.
func parseCCT(b []byte) ([]Node, error) {
	r := &reader{b: b}
	if len(b) == 0 {
		return nil, nil
	}
	count := r.u64()
	size := 19
	if rest := uint64(r.left()); count > 0 && rest == count*18 {
		size = 18
	}
	n := r.count(count, size)
	nodes := make([]Node, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		nd := Node{ID: r.u32(), Parent: r.u32(), Module: r.u16(), Offset: r.u64(), Unwound: true}
		if size == 19 {
			nd.Unwound = r.u8() != 0
		}
		nodes = append(nodes, nd)
	}
	return nodes, r.done()
}

// Metric flags: 16 bytes, the kind (byte 0: raw, derived), which of
// inclusive or exclusive values (byte 1: hpcrun leaves it 0), the values'
// form (byte 2: integer, real), a spare byte, the partner metric (u16),
// show and show-percent (a byte each) and 8 spare bytes.
const (
	metricRaw  = 1
	valFmtInt  = 1
	valFmtReal = 2
)

func parseMetrics(b []byte) ([]Metric, error) {
	r := &reader{b: b}
	if len(b) == 0 {
		return nil, nil
	}
	n := r.count(uint64(r.u32()), 60)
	var ms []Metric
	for i := 0; i < n && r.err == nil; i++ {
		var m Metric
		m.Name = r.str()
		m.Description = r.str()
		flags := r.take(16)
		if flags != nil {
			m.Real = flags[2] == valFmtReal
			m.Show = flags[6] != 0
			m.ShowPercent = flags[7] != 0
		}
		m.Period = r.u64()
		m.Formula = r.str()
		m.Format = r.str()
		m.Frequency = r.u16() != 0
		m.Multiplexed = r.u16() != 0
		m.ThresholdMean = math.Float64frombits(r.u64())
		m.Samples = r.u64()
		ms = append(ms, m)
	}
	return ms, r.done()
}

// parseValues reads the thread's id tuple and its sparse values: the
// values (u64, metric u16), then for each node with values the index of
// its first, ended by "end!" and the count.
func parseValues(b []byte) ([]IDTuple, []Value, error) {
	r := &reader{b: b}
	if len(b) == 0 {
		return nil, nil, nil
	}
	nt := r.count(uint64(r.u16()), 18)
	var tuple []IDTuple
	for i := 0; i < nt && r.err == nil; i++ {
		tuple = append(tuple, IDTuple{Kind: r.u16(), Physical: r.u64(), Logical: r.u64()})
	}
	nv := r.count(r.u64(), 10)
	nn := int(r.u32())
	if r.err != nil {
		return nil, nil, r.err
	}
	vals := make([]Value, nv)
	for i := range vals {
		vals[i].Bits = r.u64()
		vals[i].Metric = r.u16()
	}
	nn = r.count(uint64(nn)+1, 12) - 1
	if r.err != nil {
		return nil, nil, r.err // count is not bounded then
	}
	prev := uint64(0)
	var node uint32
	// A node's values are together: listed twice, they would not be,
	// and hpcprof would take one of the two runs.
	listed := make(map[uint32]bool, nn)
	for i := 0; i <= nn && r.err == nil; i++ {
		id, start := r.u32(), r.u64()
		if start < prev || start > uint64(nv) {
			return nil, nil, fmt.Errorf("node %d's values start at %d, after %d of %d", id, start, prev, nv)
		}
		if i < nn {
			if listed[id] {
				return nil, nil, fmt.Errorf("node %d listed twice in the index of metric values", id)
			}
			listed[id] = true
		}
		for j := prev; j < start; j++ {
			vals[j].Node = node
		}
		if i == nn && (id != lastNodeEnd || start != uint64(nv)) {
			return nil, nil, fmt.Errorf("node index ends with node %#x at %d, want end! at %d", id, start, nv)
		}
		node, prev = id, start
	}
	return tuple, vals, r.done()
}
