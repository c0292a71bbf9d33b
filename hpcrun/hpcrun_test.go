package hpcrun

import (
	"bloop/internal/testenv"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// real is the profile a real hpcrun 2023.08.1 wrote (../shared/hpcrun-meas).
var real = filepath.Join("..", "..", "shared", "hpcrun-meas", "measurements", "prog-000000-000-007f0100-4247-0.hpcrun")

func readReal(t testing.TB) []byte {
	data, err := os.ReadFile(testenv.Shared(t, real))
	if err != nil {
		t.Fatal(err)

	}
	return data
}

// TestParseReal checks every section of the real profile against what
// its hex dump (hpcrun-hexdump.txt) and hpcprof's tree say.
func TestParseReal(t *testing.T) {
	p, err := Parse(readReal(t))
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != "04.00" || p.Get("program-name") != "prog" || p.Get("process-id") != "4247" || len(p.Header) != 11 {
		t.Errorf("header: version %q, %d pairs %v", p.Version, len(p.Header), p.Header)
	}
	if len(p.LoadMap) != 12 || p.LoadMap[0] != (LoadModule{1, "/opt/demo/prog", FlagAnalyze}) {
		t.Errorf("load map: %d entries, first %+v", len(p.LoadMap), p.LoadMap[0])
	}
	wantNodes := []Node{
		{12, 0, 0, 0x5e5072696d617279, true},
		{18, 12, 0, 0x7c204d61696e2020, true},
		{20, 18, 1, 0x10e5, true},
		{30, 20, 1, 0x1284, true},
		{22, 20, 1, 0x1288, true},
		{24, 20, 1, 0x128c, true},
		{26, 20, 1, 0x1293, true},
		{28, 20, 1, 0x1290, true},
		{32, 18, 1, 0x10f6, true},
		{34, 32, 1, 0x1026, true},
	}
	if len(p.Nodes) != len(wantNodes) {
		t.Fatalf("%d nodes, want %d: %+v", len(p.Nodes), len(wantNodes), p.Nodes)
	}
	for i, n := range wantNodes {
		if p.Nodes[i] != n {
			t.Errorf("node %d: %+v, want %+v", i, p.Nodes[i], n)
		}
	}
	if p.Nodes[0].Placeholder() != RootPrimary || p.Nodes[1].Placeholder() != FenceMain {
		t.Errorf("placeholders %q %q", p.Nodes[0].Placeholder(), p.Nodes[1].Placeholder())
	}
	if len(p.Metrics) != 1 {
		t.Fatalf("metrics %+v", p.Metrics)
	}
	m := p.Metrics[0]
	if m.Name != "REALTIME (sec)" || !m.Real || m.Period != 1 || !m.Show || !m.ShowPercent {
		t.Errorf("metric %+v", m)
	}
	if len(p.IDTuple) != 3 || p.IDTuple[0].Kind&0xff != 1 || p.IDTuple[0].Physical != 0x7f0100 || p.IDTuple[2].Kind&0xff != 3 {
		t.Errorf("id tuple %+v", p.IDTuple)
	}
	sum := 0.0
	nodes := map[uint32]float64{}
	for _, v := range p.Values {
		sum += m.Float(v)
		nodes[v.Node] += m.Float(v)
	}
	// hpcprof: root inclusive 0.975111, line prog.c:26's instruction 0.001041.
	if math.Abs(sum-0.975111) > 1e-6 || len(p.Values) != 6 || math.Abs(nodes[34]-0.001041) > 1e-6 {
		t.Errorf("values: %d, sum %g, node 34 %g", len(p.Values), sum, nodes[34])
	}
}

// TestWriteRoundTrip: what Parse reads, Write writes back byte for byte.
func TestWriteRoundTrip(t *testing.T) {
	data := readReal(t)
	p, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), data) {
		n := 0
		for n < min(b.Len(), len(data)) && b.Bytes()[n] == data[n] {
			n++
		}
		t.Fatalf("written %d bytes, real %d; first difference at %#x", b.Len(), len(data), n)
	}
}

// TestCorrupt: damaged profiles give an error, never a panic or a huge
// allocation.
func TestCorrupt(t *testing.T) {
	data := readReal(t)
	for _, n := range []int{0, 10, 23, 500, 1024, 1500, 0x1400, len(data) - 1} {
		if _, err := Parse(data[:n]); err == nil {
			t.Errorf("truncated to %d bytes: no error", n)
		}
	}
	for _, c := range []struct {
		name string
		off  int
		b    []byte
	}{
		{"load map count", 0x400, []byte{0xff, 0xff, 0xff, 0xff}},
		{"node count", 0x800, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"node parent after it", 0x80c, []byte{0, 0, 0, 40}},
		{"metric count", 0xc00, []byte{0, 0, 0, 9}},
		{"value count", 0x1438, []byte{0, 0, 0, 0, 0, 0, 0, 7}},
		{"metric id", 0x144c, []byte{0, 9}},
		{"node index end", 0x14c8, []byte{'e', 'n', 'd', '?'}},
		{"value of no node", 0x1480, []byte{0, 0, 0, 99}},
		{"section bounds", len(data) - 112 + 8, []byte{0xff, 0, 0, 0, 0, 0, 0, 0}},
	} {
		bad := append([]byte(nil), data...)
		copy(bad[c.off:], c.b)
		if _, err := Parse(bad); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func FuzzParse(f *testing.F) {
	if data, err := os.ReadFile(real); err == nil {
		f.Add(data)
	}
	var b bytes.Buffer
	Write(&b, &Profile{LoadMap: []LoadModule{{1, "/bin/true", 1}}, Nodes: []Node{{ID: 2, Offset: 1}, {ID: 4, Parent: 2, Module: 1, Offset: 5}},
		Metrics: []Metric{{Name: "m", Period: 3}}, Values: []Value{{Node: 4, Bits: 1}}})
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		// Every node and value takes bytes of the file.
		if len(p.Nodes)+len(p.Values)+len(p.LoadMap) > len(data) {
			t.Fatalf("%d nodes, %d values from %d bytes", len(p.Nodes), len(p.Values), len(data))
		}
		var out bytes.Buffer
		if err := Write(&out, p); err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(out.Bytes()); err != nil {
			t.Fatalf("a parsed profile, written again, does not parse: %v", err)
		}
	})
}

// TestPlaceholderOffset: a placeholder's name and its offset, both ways,
// as in the real profile (node 12, ^Primary).
func TestPlaceholderOffset(t *testing.T) {
	if PlaceholderOffset(RootPrimary) != 0x5e5072696d617279 {
		t.Errorf("^Primary: %#x", PlaceholderOffset(RootPrimary))
	}
	for _, name := range []string{RootPrimary, RootPartial, FenceMain, FenceThread, NoActivity, Unnormalized} {
		if got := (Node{Offset: PlaceholderOffset(name)}).Placeholder(); got != name {
			t.Errorf("%q: back as %q", name, got)
		}
	}
}

// TestKernelModule: the kernel's load-map name with and without the
// release, read back; other names are not the kernel's.
func TestKernelModule(t *testing.T) {
	for _, release := range []string{"", "6.1.0-18-amd64"} {
		if got, ok := KernelRelease(KernelModuleOf(release)); !ok || got != release {
			t.Errorf("%q: back as %q, %v", release, got, ok)
		}
	}
	for _, name := range []string{"[vdso]", "[vmlinux-]", "/boot/vmlinux-6.1", "[vmlinux"} {
		if _, ok := KernelRelease(name); ok {
			t.Errorf("%q taken for the kernel", name)
		}
	}
}
