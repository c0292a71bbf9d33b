package hpcrun

import (
	"bytes"
	"os"
	"testing"
)

// TestLayoutReal: the strict walk accepts the real profile and finds the
// offsets its hex dump (hpcrun-hexdump.txt) shows.
func TestLayoutReal(t *testing.T) {
	fields, err := Layout(readReal(t))
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]int{}
	count := map[string]int{}
	for _, f := range fields {
		k := f.Section + "/" + f.Name
		if count[k] == 0 {
			at[k] = f.Off
		}
		count[k]++
	}
	for _, c := range []struct {
		field     string
		off, many int
	}{
		{"header/magic", 0, 1},
		{"header/pairs", 0x18, 1},
		{"header/pair.name", 0x20, 11},
		{"load map/count", 0x400, 1},
		{"load map/module.id", 0x404, 12},
		{"calling-context tree/count", 0x800, 1},
		{"calling-context tree/node.id", 0x808, 10},
		{"metric table/count", 0xc00, 1},
		{"metric table/metric.flags", 0xc28, 1},
		{"id-tuple dictionary/count", 0x1000, 1},
		{"metric values/id-tuple.levels", 0x1400, 1},
		{"metric values/id-tuple.kind", 0x1402, 3},
		{"metric values/value.bits", 0x1444, 6},
		{"metric values/index.node", 0x1480, 7},
		{"footer/magic", 0x1868, 1},
	} {
		if at[c.field] != c.off || count[c.field] != c.many {
			t.Errorf("%s: %d at %#x first, want %d at %#x", c.field, count[c.field], at[c.field], c.many, c.off)
		}
	}
}

// TestLayoutRefuses: what Parse accepts but hpcrun 2023.08 never writes
// fails the strict walk, each with its reason.
func TestLayoutRefuses(t *testing.T) {
	data := readReal(t)
	for _, c := range []struct {
		name string
		off  int
		b    []byte
	}{
		{"version", 0x12, []byte("04.01")},
		{"pair name", 0x24, []byte("x")},
		{"host id", 0x176, []byte("g")},
		{"padding", 0x3ff, []byte{1}},
		{"module id", 0x404, []byte{0, 3}},
		{"module flags", 0x41f, []byte{3}},
		{"unwound byte", 0x81a, []byte{2}},
		{"a root other than ^Primary", 0x812, []byte(RootPartial)},
		{"^Partial below the main fence", 0x836, append([]byte{0, 0}, RootPartial...)},
		{"metric flags", 0xc29, []byte{1}},
		{"kind name", 0x100b, []byte("X")},
		{"id-tuple kind", 0x1402, []byte{0x41}},
	} {
		bad := append([]byte(nil), data...)
		copy(bad[c.off:], c.b)
		if _, err := Layout(bad); err == nil {
			t.Errorf("%s: no error", c.name)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
}

// wellFormed is a profile of every section as hpcrun 2023.08 writes
// them: two threads' worth of placement (a partial path, values at the
// thread's entry), two metrics.
func wellFormed() *Profile {
	p := &Profile{Version: "04.00",
		LoadMap: []LoadModule{{1, "/bin/true", FlagAnalyze}, {2, KernelModule, 0}},
		Nodes: []Node{{ID: 2, Offset: PlaceholderOffset(RootPrimary), Unwound: true}, {ID: 4, Parent: 2, Offset: PlaceholderOffset(FenceThread), Unwound: true},
			{ID: 6, Parent: 4, Module: 1, Offset: 0x1040, Unwound: true}, {ID: 8, Parent: 2, Offset: PlaceholderOffset(RootPartial), Unwound: true},
			{ID: 10, Parent: 8, Module: 2, Offset: 0xffffffff81000000, Unwound: true}},
		Metrics: []Metric{{Name: "cpu-clock", Description: "cpu-clock", Period: 1, Show: true, ShowPercent: true},
			{Name: "REALTIME (sec)", Description: "REALTIME (sec)", Real: true, Period: 1, Show: true}},
		IDTuple: []IDTuple{{Kind: Compose(KindNode, IDsLogicLocal), Physical: 0x7f0100}, {Kind: Compose(KindThread, IDsLogicOnly), Physical: 1, Logical: 1}},
		Values:  []Value{{Node: 6, Metric: 0, Bits: 3}, {Node: 6, Metric: 1, Bits: 0x3f50624dd2f1a9fc}, {Node: 4, Metric: 0, Bits: 1}, {Node: 10, Metric: 0, Bits: 7}},
	}
	for _, n := range HeaderNames {
		p.Header = append(p.Header, [2]string{n, "1"})
	}
	p.Header[0][1], p.Header[1][1], p.Header[2][1], p.Header[3][1] = "true", "/bin/true", "/usr/bin", ""
	return p
}

// TestLayoutWritten: what Write writes of a well-formed profile, the
// strict walk accepts; what Write refuses, it says why.
func TestLayoutWritten(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, wellFormed()); err != nil {
		t.Fatal(err)
	}
	if _, err := Layout(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	apart := wellFormed()
	apart.Values = append(apart.Values, Value{Node: 6, Metric: 0, Bits: 1})
	orphan := wellFormed()
	orphan.Nodes[2].Parent = 40
	for name, p := range map[string]*Profile{"values apart": apart, "node before its parent": orphan} {
		if err := Write(&bytes.Buffer{}, p); err == nil {
			t.Errorf("%s: written", name)
		}
	}
}

func FuzzLayout(f *testing.F) {
	if data, err := os.ReadFile(real); err == nil {
		f.Add(data)
	}
	var b bytes.Buffer
	if err := Write(&b, wellFormed()); err == nil {
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fields, err := Layout(data)
		if err != nil {
			return
		}
		// What the strict walk accepts, Parse reads, and Write writes back.
		p, err := Parse(data)
		if err != nil {
			t.Fatalf("Layout accepts, Parse refuses: %v", err)
		}
		var out bytes.Buffer
		if err := Write(&out, p); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("%d fields accepted, written back differently", len(fields))
		}
	})
}
