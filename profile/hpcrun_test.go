package profile

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"bloop/hpcrun"
	"bloop/internal/testenv"
)

const hpcrunMeas = "../../shared/hpcrun-meas"

// copyMeas copies the real measurement directory, and with structs the
// structure files hpcstruct wrote for it, to a directory of the test's.
func copyMeas(t *testing.T, structs bool) string {
	t.Helper()
	src := filepath.Join(hpcrunMeas, "measurements")
	if _, err := os.Stat(src); err != nil {
		testenv.Absent(t, "../shared/hpcrun-meas missing")
	}
	dir := t.TempDir()
	copyTree(t, src, dir)
	if structs {
		copyTree(t, filepath.Join(hpcrunMeas, "hpcstruct-output", "structs"), filepath.Join(dir, "structs"))
	}
	return dir
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// treeLine is one node of hpcprof's tree (hpcprof-tree-all.txt): values
// in seconds, the node as hpcprof names it, its depth.
type treeLine struct {
	incl, excl float64
	depth      int
	node       string
}

var treeRow = regexp.MustCompile(`^\s*(\S+)\s+\S+%\s+(\S+)( +)(.*)$`)

func readHpcprofTree(t *testing.T, name string) []treeLine {
	b, err := os.ReadFile(filepath.Join(hpcrunMeas, name))
	if err != nil {
		t.Fatal(err)
	}
	var out []treeLine
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "#") || l == "" {
			continue
		}
		m := treeRow.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("%s: unreadable line %q", name, l)
		}
		incl, _ := strconv.ParseFloat(m[1], 64)
		excl, _ := strconv.ParseFloat(m[2], 64)
		out = append(out, treeLine{incl, excl, (len(m[3]) - 2) / 2, m[4]})
	}
	return out
}

// hpcprofView renders a top-down tree (with lines) as hpcprof's tree
// shows it: a call site's line above an inlined call, unanalysed code as
// an instruction, and hpcprof's exclusive values, which keep a scope's
// loops, lines and the statements around calls, but not its callees or
// inlined calls.
func hpcprofView(p *Profile, n *Node, depth int, out *[]treeLine) {
	label := "main thread"
	if n.Elem != nil {
		e := n.Elem
		switch e.Kind {
		case ElemProc:
			label = "func(call) " + e.Name
			if strings.Contains(e.Name, "+0x") {
				label = "instr " + e.Name
			}
		case ElemInline:
			*out = append(*out, treeLine{p.sec(n.Incl), 0, depth, fmt.Sprintf("line %s:%d", base(e.CallFile), e.CallLine)})
			depth++
			label = "func(inlined) " + e.Name
		case ElemLoop:
			label = fmt.Sprintf("loop %s:%d [prog+%#x]", base(e.File), e.Line, e.Addr)
		case ElemStmt:
			label = fmt.Sprintf("line %s:%d", base(e.File), e.Line)
		}
	}
	*out = append(*out, treeLine{p.sec(n.Incl), p.sec(lexExcl(n, true)), depth, label})
	for _, c := range sorted(n.Children) {
		hpcprofView(p, c, depth+1, out)
	}
}

func lexExcl(n *Node, top bool) uint64 {
	if !top && n.Elem != nil && (n.Elem.Kind == ElemProc || n.Elem.Kind == ElemInline) {
		return 0
	}
	v := n.Excl
	for _, c := range n.Children {
		v += lexExcl(c, false)
	}
	return v
}

func (p *Profile) sec(v uint64) float64 { return float64(v) * p.EventScale[p.Event] }

// compareTrees checks a report's tree against hpcprof's, node by node.
func compareTrees(t *testing.T, p *Profile, want []treeLine, rename map[string]string) {
	t.Helper()
	var got []treeLine
	hpcprofView(p, p.Root, 0, &got)
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w treeLine
		if i < len(got) {
			g = got[i]
			if r, ok := rename[g.node]; ok {
				g.node = r
			}
		}
		if i < len(want) {
			w = want[i]
		}
		if g.node != w.node || g.depth != w.depth || math.Abs(g.incl-w.incl) > 1e-6 || math.Abs(g.excl-w.excl) > 1e-6 {
			t.Errorf("node %d: got %s%s %g/%g, hpcprof %s%s %g/%g", i, strings.Repeat("  ", g.depth), g.node, g.incl, g.excl,
				strings.Repeat("  ", w.depth), w.node, w.incl, w.excl)
		}
	}
}

// TestMeasurementHpcstructStructs: a real hpcrun measurement with the
// structure files real hpcstruct wrote for it gives hpcprof's tree: the
// same procedures, inlined calls, loops and lines with the same values.
func TestMeasurementHpcstructStructs(t *testing.T) {
	dir := copyMeas(t, true)
	p, err := Build(dir, Options{Analyze: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	compareTrees(t, p, readHpcprofTree(t, "hpcprof-tree-all.txt"), nil)
	if p.Meas.Log != [4]uint64{936, 936, 0, 0} || len(p.Warnings) != 0 {
		t.Errorf("hpcrun's log: %v; warnings %q", p.Meas.Log, p.Warnings)
	}
}

// TestMeasurementAnalysed: without structs/, each module is analysed by
// bloop (the binary found in a module directory: the recorded path is
// not on this machine), and the tree is hpcprof's again, except that
// bloop knows the PLT stub hpcstruct leaves as a bare instruction.
func TestMeasurementAnalysed(t *testing.T) {
	dir := copyMeas(t, false)
	p, err := Build(dir, Options{ModuleDirs: []string{hpcrunMeas}})
	if err != nil {
		t.Fatal(err)
	}
	compareTrees(t, p, readHpcprofTree(t, "hpcprof-tree-all.txt"), map[string]string{"func(call) prog@0x1020": "instr prog+0x1026"})
}

// placeholderNode is a node of load module 0 named as hpcrun names them.
func placeholderNode(id, parent uint32, name string) hpcrun.Node {
	return hpcrun.Node{ID: id, Parent: parent, Offset: hpcrun.PlaceholderOffset(name), Unwound: true}
}

// TestMeasurementThreads builds a measurement of its own from the
// sample's prog: a main thread with a complete path, a second thread
// with a partial one and an OpenMP idle placeholder, two metrics (real
// seconds, and an integer counter with a period), a value at a node of
// a module missing from the load map, and a damaged profile. Every value
// that can be placed is in the trees, the partial path under [partial];
// what cannot is said.
func TestMeasurementThreads(t *testing.T) {
	if _, err := os.Stat(filepath.Join(hpcrunMeas, "prog")); err != nil {
		testenv.Absent(t, "../shared/hpcrun-meas missing")
	}
	dir := t.TempDir()
	lm := []hpcrun.LoadModule{{ID: 1, Path: "/gone/prog", Flags: hpcrun.FlagAnalyze}}
	metrics := []hpcrun.Metric{{Name: "CPUTIME (sec)", Real: true, Period: 1}, {Name: "PAPI_TOT_CYC", Period: 1000000}}
	sec := func(x float64) uint64 { return math.Float64bits(x) }
	write := func(name string, hp *hpcrun.Profile) {
		var b bytes.Buffer
		if err := hpcrun.Write(&b, hp); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("prog-000000-000-0-1-0.hpcrun", &hpcrun.Profile{
		Header:  [][2]string{{"program-name", "prog"}, {"program-path", "/gone/prog"}, {"thread-id", "0"}, {"process-id", "1"}},
		LoadMap: lm, Metrics: metrics,
		Nodes: []hpcrun.Node{
			placeholderNode(2, 0, hpcrun.RootPrimary), placeholderNode(4, 2, hpcrun.FenceMain),
			{ID: 6, Parent: 4, Module: 1, Offset: 0x10e5, Unwound: true}, // main, calling compute
			{ID: 8, Parent: 6, Module: 1, Offset: 0x1284, Unwound: true}, // the inner loop
			{ID: 10, Parent: 6, Module: 1, Offset: 0x1293, Unwound: true},
			{ID: 12, Parent: 4, Module: 7, Offset: 0x10, Unwound: true}, // a module not in the load map
		},
		Values: []hpcrun.Value{{Node: 8, Metric: 0, Bits: sec(0.5)}, {Node: 8, Metric: 1, Bits: 40}, {Node: 10, Metric: 0, Bits: sec(0.25)},
			{Node: 12, Metric: 0, Bits: sec(0.125)}},
	})
	write("prog-000000-001-0-1-0.hpcrun", &hpcrun.Profile{
		Header:  [][2]string{{"program-name", "prog"}, {"thread-id", "1"}, {"process-id", "1"}},
		LoadMap: lm, Metrics: metrics,
		Nodes: []hpcrun.Node{
			placeholderNode(2, 0, hpcrun.RootPrimary), placeholderNode(4, 2, hpcrun.RootPartial),
			{ID: 6, Parent: 4, Module: 1, Offset: 0x1288, Unwound: true},
			placeholderNode(8, 2, hpcrun.FenceThread), placeholderNode(10, 8, "OMP Idle"),
		},
		Values: []hpcrun.Value{{Node: 6, Metric: 0, Bits: sec(0.0625)}, {Node: 6, Metric: 1, Bits: 2}, {Node: 10, Metric: 0, Bits: sec(0.03125)}},
	})
	if err := os.WriteFile(filepath.Join(dir, "prog-000000-002-0-1-0.hpcrun"), []byte(hpcrun.Magic+"04.00b damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Build(dir, Options{ModuleDirs: []string{hpcrunMeas}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Meta.EventNames(), ","); got != "CPUTIME (sec),PAPI_TOT_CYC" {
		t.Errorf("events %q", got)
	}
	// The value at the unplaceable node is left out, and said.
	if p.sec(p.Total) != 0.5+0.25+0.0625+0.03125 || p.EventTotals[1] != 42_000_000 || p.sec(p.Meas.Partial[0]) != 0.0625 {
		t.Errorf("totals %g s, %d cycles; partial %g s", p.sec(p.Total), p.EventTotals[1], p.sec(p.Meas.Partial[0]))
	}
	warn := strings.Join(p.Warnings, "\n")
	if !strings.Contains(warn, "prog-000000-002-0-1-0.hpcrun") || !strings.Contains(warn, "not in the load map") {
		t.Errorf("warnings %q: want the damaged profile and the node of no module", warn)
	}
	if len(p.ThreadTrees()) != 2 || !strings.Contains(p.Comms[1], "thread 1") {
		t.Errorf("threads %d, comms %v", len(p.ThreadTrees()), p.Comms)
	}
	paths := map[string]uint64{}
	var walk func(n *Node, path string)
	walk = func(n *Node, path string) {
		if n.Elem != nil {
			path += "/" + n.Elem.Label()
		}
		if n.Excl > 0 {
			paths[path] += n.Excl
		}
		for _, c := range n.Children {
			walk(c, path)
		}
	}
	walk(p.Root, "")
	// Values by path prefix.
	want := map[string]uint64{
		"/main/prog.c:25/compute/[inlined] kernel (called at prog.c:16)/loop at prog.c:9/loop at prog.c:10/": 750_000_000,
		"/[partial]/compute/[inlined] kernel (called at prog.c:16)/loop at prog.c:9/loop at prog.c:10/":      62_500_000,
		"/<OMP Idle>": 31_250_000,
	}
	for prefix, v := range want {
		found := uint64(0)
		for path, w := range paths {
			if strings.HasPrefix(path+"/", prefix) {
				found += w
			}
		}
		if found != v {
			t.Errorf("%s: %d, want %d (paths %v)", prefix, found, v, paths)
		}
	}
	// The counter selected: its values times its period, shown as counted
	// (scale 1: not a real-valued metric kept in nano-units).
	q, err := Build(dir, Options{ModuleDirs: []string{hpcrunMeas}, Event: "PAPI_TOT_CYC"})
	if err != nil {
		t.Fatal(err)
	}
	if q.Total != 42_000_000 || q.EventUnit(q.Event) != "count" {
		t.Errorf("PAPI_TOT_CYC total %d (%s)", q.Total, q.EventUnit(q.Event))
	}
}
