// Package hpcrun reads the .hpcrun profiles HPCToolkit's hpcrun writes
// (format 04.00): the header's name-value pairs, the load map, the
// calling-context tree, the metric table, the thread's id tuple and its
// sparse metric values. Integers are big-endian; a string is a u32
// length and its bytes. Each section starts at a multiple of 1024 bytes
// and a footer of 14 u64 at the end of the file gives their bounds.
//
// Parse reads a profile, Write writes one (bloop report --hpcrun), and
// Layout walks one field by field against what hpcrun 2023.08 writes.
package hpcrun

import (
	"fmt"
	"math"
	"os"
)

// Magic starts every .hpcrun file; the 5-byte version and an endianness
// byte follow it.
const Magic = "HPCRUN-profile____"

// FlagAnalyze is the load-map flag hpcrun sets on a module it saw samples
// or unwinding in: the modules worth a structure file.
const FlagAnalyze = 1

// LoadModule is one entry of a profile's load map.
type LoadModule struct {
	ID    uint16
	Path  string
	Flags uint64
}

// Node is a node of the calling-context tree. Module 0 holds hpcrun's
// placeholders (roots, thread fences, ...), their Offset an 8-character
// name; other nodes are an instruction of a load module: the sampled one
// for a leaf, the call (return address minus one) for the others.
type Node struct {
	ID, Parent uint32 // Parent 0: a root
	Module     uint16
	Offset     uint64
	// Unwound is false for a node hpcrun could not unwind through (its
	// context must be reconstructed, as for GPU code).
	Unwound bool
}

// Placeholder returns the name of a placeholder node's offset.
func (n Node) Placeholder() string {
	var b [8]byte
	for i := range b {
		b[i] = byte(n.Offset >> (56 - 8*i))
	}
	return string(b[:])
}

// PlaceholderOffset is the offset that names a placeholder node: the
// name's 8 characters, big-endian (shorter names padded with zeros).
func PlaceholderOffset(name string) uint64 {
	var v uint64
	for i := 0; i < 8; i++ {
		v <<= 8
		if i < len(name) {
			v |= uint64(name[i])
		}
	}
	return v
}

// The placeholders hpcrun's calling-context trees are built from.
const (
	RootPrimary  = "^Primary" // the root of complete call paths
	RootPartial  = "^Partial" // the root of call paths whose unwind stopped early
	FenceMain    = "| Main  " // the main thread's entry
	FenceThread  = "| Thread" // another thread's entry
	NoActivity   = "NoActvty" // idleness
	Unnormalized = "*Unnorm " // an address in no load module
)

// Metric describes one metric of the metric table.
type Metric struct {
	Name, Description string
	// Real: values are float64 bits, else unsigned integers.
	Real bool
	// Period multiplies each value: the event count one sample stands for.
	Period      uint64
	Show        bool
	ShowPercent bool
	Formula     string // a derived metric's formula (it has no values)
	Format      string
	Frequency   bool
	Multiplexed bool
	// ThresholdMean and Samples describe multiplexed hardware counters.
	ThresholdMean float64
	Samples       uint64
}

// Value is one metric's value at one node.
type Value struct {
	Node   uint32
	Metric uint16
	Bits   uint64
}

// Float is the metric's value of v times the metric's period: what a
// view shows (seconds for time metrics, events for counters).
func (m Metric) Float(v Value) float64 {
	x := float64(v.Bits)
	if m.Real {
		x = math.Float64frombits(v.Bits)
	}
	return x * float64(max(m.Period, 1))
}

// IDTuple is one level of a profile's identity (node, rank, thread, ...).
type IDTuple struct {
	Kind              uint16 // the kind in the low byte, how to read the indices above
	Physical, Logical uint64
}

// Profile is one .hpcrun file: one thread of one process.
type Profile struct {
	Version string
	Header  [][2]string // name-value pairs in file order
	LoadMap []LoadModule
	Nodes   []Node // in file order: a parent before its children
	Metrics []Metric
	IDTuple []IDTuple
	Values  []Value // by node, in file order
}

// Get returns the header value of name ("program-name", "mpi-rank",
// "thread-id", "process-id", ...).
func (p *Profile) Get(name string) string {
	for _, nv := range p.Header {
		if nv[0] == name {
			return nv[1]
		}
	}
	return ""
}

// Read reads the .hpcrun file name.
func Read(name string) (*Profile, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// ReadLoadMap reads only the load map of the .hpcrun file name: its
// first bytes, its footer and the section the footer places the map in,
// not the file (a thread's profile can be megabytes; a measurement
// directory holds one per thread).
func ReadLoadMap(name string) ([]LoadModule, error) {
	file, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	head := make([]byte, min(size, int64(headSize)))
	foot := make([]byte, min(size, footerSize))
	_, err = file.ReadAt(head, 0)
	if err == nil {
		_, err = file.ReadAt(foot, size-int64(len(foot)))
	}
	var f *footer
	if err == nil {
		f, err = footerOf(head, foot, size)
	}
	if err == nil {
		lo, hi := f[2*secLoadMap], f[2*secLoadMap+1]
		b := make([]byte, hi-lo)
		if _, err = file.ReadAt(b, int64(lo)); err == nil {
			var lms []LoadModule
			if lms, err = parseLoadMap(b); err == nil {
				return lms, nil
			}
		}
		err = fmt.Errorf("load map at %#x: %w", lo, err)
	}
	return nil, fmt.Errorf("%s: %w", name, err)
}

// Parse decodes a whole .hpcrun file.
func Parse(data []byte) (*Profile, error) {
	f, err := parseFooter(data)
	if err != nil {
		return nil, err
	}
	p := &Profile{Version: string(data[len(Magic) : len(Magic)+5])}
	steps := []struct {
		sec   int
		what  string
		parse func([]byte) error
	}{
		{secHeader, "header", func(b []byte) (err error) { p.Header, err = parseHeader(b); return }},
		{secLoadMap, "load map", func(b []byte) (err error) { p.LoadMap, err = parseLoadMap(b); return }},
		{secCCT, "calling-context tree", func(b []byte) (err error) { p.Nodes, err = parseCCT(b); return }},
		{secMetrics, "metric table", func(b []byte) (err error) { p.Metrics, err = parseMetrics(b); return }},
		{secValues, "metric values", func(b []byte) (err error) { p.IDTuple, p.Values, err = parseValues(b); return }},
	}
	for _, s := range steps {
		if err := s.parse(f.section(data, s.sec)); err != nil {
			return nil, fmt.Errorf("%s at %#x: %w", s.what, f[2*s.sec], err)
		}
	}
	return p, p.check()
}

// check verifies what the views rely on: parents before their children,
// values of nodes and metrics that exist.
func (p *Profile) check() error {
	ids := make(map[uint32]bool, len(p.Nodes))
	for _, n := range p.Nodes {
		if n.ID == 0 || ids[n.ID] {
			return fmt.Errorf("calling-context tree: node id %d repeated or null", n.ID)
		}
		if n.Parent != 0 && !ids[n.Parent] {
			return fmt.Errorf("calling-context tree: node %d before its parent %d", n.ID, n.Parent)
		}
		ids[n.ID] = true
	}
	for _, v := range p.Values {
		if !ids[v.Node] {
			return fmt.Errorf("metric values: node %d is not in the calling-context tree", v.Node)
		}
		if int(v.Metric) >= len(p.Metrics) {
			return fmt.Errorf("metric values: metric %d of %d", v.Metric, len(p.Metrics))
		}
	}
	return nil
}
