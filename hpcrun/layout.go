package hpcrun

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// Field is one field of a .hpcrun file as Layout found it.
type Field struct {
	Section string // "header", "load map", ..., "footer", "gap"
	Name    string // the field's name in its section ("node.parent", ...)
	Off     int
	// Width is the field's size in bytes; -1 for the bytes of a string
	// (their u32 length is a field of its own) and for padding.
	Width int
	Bytes []byte
}

// Layout walks a .hpcrun file field by field and checks each against
// what hpcrun 2023.08 writes (../shared/hpcrun-meas documents it), more
// strictly than Parse, which also reads what other writers and versions
// wrote: version 04.00, the header's eleven pairs in hpcrun's order,
// sections at multiples of 1024 in their order with zero gaps, load-map
// ids 1, 2, ... with only the analyse flag, 19-byte nodes below
// placeholder roots, the metric flags hpcrun sets, its id-tuple
// dictionary, sparse values grouped by node and ended by "end!", the
// footer. It is the tests' comparison of bloop's files with real ones.
func Layout(data []byte) ([]Field, error) {
	l := &layout{b: data}
	f, err := parseFooter(data)
	if err != nil {
		return nil, err
	}
	steps := []struct {
		name string
		walk func(*layout) error
	}{
		{"header", (*layout).header},
		{"load map", (*layout).loadMap},
		{"calling-context tree", (*layout).cct},
		{"metric table", (*layout).metrics},
		{"id-tuple dictionary", (*layout).dictionary},
		{"metric values", (*layout).values},
	}
	for i, s := range steps {
		if want := roundUp(l.off); int(f[2*i]) != want {
			return nil, fmt.Errorf("%s starts at %#x, want %#x (the first multiple of %d after the last section)", s.name, f[2*i], want, sectionAlign)
		}
		if err := l.gap(int(f[2*i])); err != nil {
			return nil, err
		}
		l.sec, l.end = s.name, int(f[2*i+1])
		if err := s.walk(l); err != nil {
			return nil, fmt.Errorf("%s at %#x: %w", s.name, l.off, err)
		}
		if l.off != l.end {
			return nil, fmt.Errorf("%s ends at %#x, the footer says %#x", s.name, l.off, l.end)
		}
	}
	if err := l.footer(f); err != nil {
		return nil, err
	}
	return l.fields, nil
}

func roundUp(n int) int { return (n + sectionAlign - 1) / sectionAlign * sectionAlign }

// layout is Layout's cursor: the fields so far, the section being read
// and where it ends, and what later sections check against.
type layout struct {
	b        []byte
	off, end int
	sec      string
	fields   []Field
	modules  map[uint16]bool
	nodes    map[uint32]bool
	primary  map[uint32]bool // the ^Primary roots
	nmetrics int
}

func (l *layout) take(name string, n int) ([]byte, error) {
	if n < 0 || l.off+n > l.end {
		return nil, fmt.Errorf("%s: %d bytes wanted, %d left in the section", name, n, l.end-l.off)
	}
	b := l.b[l.off : l.off+n]
	l.fields = append(l.fields, Field{l.sec, name, l.off, n, b})
	l.off += n
	return b, nil
}

// uint reads an unsigned big-endian field of 1, 2, 4 or 8 bytes.
func (l *layout) uint(name string, n int) (uint64, error) {
	b, err := l.take(name, n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

func (l *layout) str(name string) (string, error) {
	n, err := l.uint(name+".length", 4)
	if err != nil {
		return "", err
	}
	if n > uint64(l.end-l.off) {
		return "", fmt.Errorf("%s: %d bytes, %d left in the section", name, n, l.end-l.off)
	}
	b, _ := l.take(name, int(n))
	l.fields[len(l.fields)-1].Width = -1
	return string(b), nil
}

// gap checks the padding up to a section's start: zero bytes.
func (l *layout) gap(to int) error {
	if to > len(l.b) {
		return fmt.Errorf("section at %#x, past the end of the file", to)
	}
	if to > l.off {
		if bytes.Count(l.b[l.off:to], []byte{0}) != to-l.off {
			return fmt.Errorf("padding %#x-%#x is not zero", l.off, to)
		}
		l.fields = append(l.fields, Field{"gap", "padding", l.off, -1, l.b[l.off:to]})
	}
	l.off = to
	return nil
}

func (l *layout) header() error {
	b, err := l.take("magic", len(Magic))
	if err == nil && string(b) != Magic {
		err = fmt.Errorf("magic %q", b)
	}
	if err == nil {
		if b, err = l.take("version", 5); err == nil && string(b) != "04.00" {
			err = fmt.Errorf("version %q, want 04.00", b)
		}
	}
	if err == nil {
		if b, err = l.take("endianness", 1); err == nil && b[0] != 'b' {
			err = fmt.Errorf("endianness %q, want b", b)
		}
	}
	if err != nil {
		return err
	}
	n, err := l.uint("pairs", 4)
	if err == nil && n != uint64(len(HeaderNames)) {
		err = fmt.Errorf("%d name-value pairs, hpcrun writes %d", n, len(HeaderNames))
	}
	for i := 0; err == nil && i < len(HeaderNames); i++ {
		var name, value string
		if name, err = l.str("pair.name"); err == nil && name != HeaderNames[i] {
			err = fmt.Errorf("pair %d is %q, hpcrun writes %q there", i, name, HeaderNames[i])
		}
		if err == nil {
			value, err = l.str("pair.value")
		}
		if err == nil {
			err = headerValue(name, value)
		}
	}
	return err
}

// headerValue checks the form of a header value: decimal numbers, the
// host id in hex, the paths and names free.
func headerValue(name, v string) error {
	digits := "0123456789"
	switch name {
	case "host-id":
		digits += "abcdef"
	case "mpi-rank", "thread-id", "process-id", "trace-min-time", "trace-max-time", "trace-disorder":
	default:
		return nil
	}
	if v == "" || strings.Trim(v, digits) != "" {
		return fmt.Errorf("%s %q: not a number of the form hpcrun writes", name, v)
	}
	return nil
}

func (l *layout) loadMap() error {
	n, err := l.uint("count", 4)
	l.modules = map[uint16]bool{}
	for i := uint64(0); err == nil && i < n; i++ {
		var id, flags uint64
		var path string
		if id, err = l.uint("module.id", 2); err == nil && id != i+1 {
			err = fmt.Errorf("module %d has id %d: hpcrun numbers them from 1", i, id)
		}
		if err == nil {
			path, err = l.str("module.path")
		}
		if err == nil && !strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "[") {
			err = fmt.Errorf("module %d: path %q is neither absolute nor hpcrun's [name]", id, path)
		}
		if err == nil {
			if flags, err = l.uint("module.flags", 8); err == nil && flags&^FlagAnalyze != 0 {
				err = fmt.Errorf("module %d: flags %#x, hpcrun sets only %#x", id, flags, FlagAnalyze)
			}
		}
		l.modules[uint16(id)] = true
	}
	return err
}

func (l *layout) cct() error {
	n, err := l.uint("count", 8)
	if err == nil && n > uint64(l.end-l.off)/19 {
		return fmt.Errorf("%d nodes of 19 bytes in %d bytes", n, l.end-l.off)
	}
	l.nodes, l.primary = map[uint32]bool{}, map[uint32]bool{}
	for i := uint64(0); err == nil && i < n; i++ {
		err = l.node()
	}
	return err
}

// node reads one 19-byte node: id, parent (0 for a root, else an
// earlier node), module (0: a placeholder named by its offset's 8
// characters), offset, unwound flag. The placement rules are those
// hpcprof 2023.08 reads profiles by: only ^Primary is a root, and the
// partial and idle placeholders hang from it.
func (l *layout) node() error {
	id, err := l.uint("node.id", 4)
	if err != nil {
		return err
	}
	if id == 0 || l.nodes[uint32(id)] {
		return fmt.Errorf("node id %d null or repeated", id)
	}
	parent, _ := l.uint("node.parent", 4)
	mod, _ := l.uint("node.module", 2)
	b, err := l.take("node.offset", 8)
	if err != nil {
		return err
	}
	unwound, err := l.uint("node.unwound", 1)
	switch {
	case err != nil:
		return err
	case parent != 0 && !l.nodes[uint32(parent)]:
		return fmt.Errorf("node %d before its parent %d", id, parent)
	case parent == 0 && (mod != 0 || string(b) != RootPrimary):
		return fmt.Errorf("root node %d is %q of module %d: hpcprof takes only %s as a root", id, b, mod, RootPrimary)
	case mod == 0 && (string(b) == RootPartial || string(b) == NoActivity) && !l.primary[uint32(parent)]:
		return fmt.Errorf("node %d, %s, is not a child of %s (hpcprof refuses it elsewhere)", id, b, RootPrimary)
	case mod != 0 && !l.modules[uint16(mod)]:
		return fmt.Errorf("node %d in module %d, not in the load map", id, mod)
	case mod == 0 && !printable(b):
		return fmt.Errorf("placeholder node %d named %q", id, b)
	case unwound > 1:
		return fmt.Errorf("node %d: unwound byte %d", id, unwound)
	}
	l.nodes[uint32(id)] = true
	if parent == 0 {
		l.primary[uint32(id)] = true
	}
	return nil
}

func printable(b []byte) bool {
	for _, c := range b {
		if c < ' ' || c > '~' {
			return false
		}
	}
	return true
}

func (l *layout) metrics() error {
	n, err := l.uint("count", 4)
	l.nmetrics = int(n)
	for i := uint64(0); err == nil && i < n; i++ {
		err = l.metric()
	}
	return err
}

// metric reads one metric descriptor: names, the flags hpcrun sets on a
// raw metric, its period and the fields of derived and multiplexed ones.
func (l *layout) metric() error {
	if _, err := l.str("metric.name"); err != nil {
		return err
	}
	if _, err := l.str("metric.description"); err != nil {
		return err
	}
	fl, err := l.take("metric.flags", 16)
	if err != nil {
		return err
	}
	if fl[0] != metricRaw || fl[1] != 0 || fl[2] != valFmtInt && fl[2] != valFmtReal || fl[3] != 0 || fl[4] != 0 || fl[5] != 0 ||
		fl[6] > 1 || fl[7] > 1 || !bytes.Equal(fl[8:], make([]byte, 8)) {
		return fmt.Errorf("metric flags % x: not those of an hpcrun raw metric", fl)
	}
	if period, err := l.uint("metric.period", 8); err != nil || period == 0 {
		return fmt.Errorf("metric period %d: %v", period, err)
	}
	if _, err = l.str("metric.formula"); err == nil {
		_, err = l.str("metric.format")
	}
	for _, name := range []string{"metric.frequency", "metric.multiplexed"} {
		if v, e := l.uint(name, 2); err == nil && (e != nil || v > 1) {
			err = fmt.Errorf("%s %d: %v", name, v, e)
		}
	}
	if err == nil {
		_, err = l.uint("metric.threshold-mean", 8)
	}
	if err == nil {
		_, err = l.uint("metric.samples", 8)
	}
	return err
}

func (l *layout) dictionary() error {
	n, err := l.uint("count", 2)
	if err == nil && n != uint64(len(KindNames)) {
		err = fmt.Errorf("%d id-tuple kinds, hpcrun names %d", n, len(KindNames))
	}
	for i := 0; err == nil && i < len(KindNames); i++ {
		var kind uint64
		var name string
		if kind, err = l.uint("kind.id", 2); err == nil {
			name, err = l.str("kind.name")
		}
		if err == nil && (kind != uint64(i) || name != KindNames[i]) {
			err = fmt.Errorf("kind %d named %q, hpcrun's %d is %q", kind, name, i, KindNames[i])
		}
	}
	return err
}

func (l *layout) values() error {
	levels, err := l.uint("id-tuple.levels", 2)
	for i := uint64(0); err == nil && i < levels; i++ {
		var kind uint64
		if kind, err = l.uint("id-tuple.kind", 2); err == nil && (kind&0xff >= uint64(len(KindNames)) || kind&0x3f00 != 0) {
			err = fmt.Errorf("id-tuple level %d: kind %#x", i, kind)
		}
		if err == nil {
			_, err = l.uint("id-tuple.physical", 8)
		}
		if err == nil {
			_, err = l.uint("id-tuple.logical", 8)
		}
	}
	var nv, nn uint64
	if err == nil {
		nv, err = l.uint("values.count", 8)
	}
	if err == nil {
		nn, err = l.uint("nodes.count", 4)
	}
	if err == nil && (nv > uint64(l.end-l.off)/10 || nn > uint64(l.end-l.off)/12) {
		err = fmt.Errorf("%d values, %d nodes in %d bytes", nv, nn, l.end-l.off)
	}
	for i := uint64(0); err == nil && i < nv; i++ {
		var m uint64
		if _, err = l.uint("value.bits", 8); err == nil {
			if m, err = l.uint("value.metric", 2); err == nil && m >= uint64(l.nmetrics) {
				err = fmt.Errorf("value %d of metric %d of %d", i, m, l.nmetrics)
			}
		}
	}
	return l.nodeIndex(err, nn, nv)
}

// nodeIndex reads the index of the nodes with values: each node once,
// its first value's index after the last node's, ended by "end!" and the
// number of values.
func (l *layout) nodeIndex(err error, nn, nv uint64) error {
	seen := map[uint64]bool{}
	prev := uint64(0)
	for i := uint64(0); err == nil && i <= nn; i++ {
		var id, start uint64
		if id, err = l.uint("index.node", 4); err == nil {
			start, err = l.uint("index.start", 8)
		}
		switch {
		case err != nil:
		case i == nn && (id != lastNodeEnd || start != nv):
			err = fmt.Errorf("index ends with %#x at %d, want end! at %d", id, start, nv)
		case i < nn && (!l.nodes[uint32(id)] || seen[id]):
			err = fmt.Errorf("index entry %d: node %d not in the tree, or listed twice", i, id)
		case i < nn && (start >= nv || i > 0 && start <= prev || i == 0 && start != 0):
			err = fmt.Errorf("index entry %d: node %d's values start at %d, after %d of %d", i, id, start, prev, nv)
		}
		seen[id], prev = true, start
	}
	return err
}

func (l *layout) footer(f *footer) error {
	start := roundUp(l.off)
	if err := l.gap(start); err != nil {
		return err
	}
	if start+footerSize != len(l.b) || f[footerWords-2] != uint64(start) {
		return fmt.Errorf("footer at %#x (the footer says %#x) in %d bytes", start, f[footerWords-2], len(l.b))
	}
	for i := 0; i < footerWords; i++ {
		l.fields = append(l.fields, Field{"footer", footerName(i), start + 8*i, 8, l.b[start+8*i : start+8*i+8]})
	}
	if binary.BigEndian.Uint64(l.b[len(l.b)-8:]) != footerMagic {
		return fmt.Errorf("footer magic")
	}
	return nil
}

func footerName(i int) string {
	switch {
	case i == footerWords-1:
		return "magic"
	case i == footerWords-2:
		return "footer"
	case i%2 == 0:
		return "start"
	}
	return "end"
}
