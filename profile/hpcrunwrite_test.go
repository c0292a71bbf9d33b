package profile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"bloop/hpcrun"
	"bloop/internal/rectest"
	"bloop/internal/testenv"
	"bloop/meas"
)

// hpcrunRoundTrip writes p as a measurement directory, checks every
// profile's layout against the real one's, and reads the directory back
// into the same trees: the same stacks (module, instruction; partial or
// not) with the same values per event, the same scope tree, the same
// threads.
func hpcrunRoundTrip(t *testing.T, p *Profile, opt Options) (*Profile, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "m")
	if err := p.WriteHpcrun(dir); err != nil {
		t.Fatal(err)
	}
	files, err := meas.Profiles(dir)
	if err != nil || len(files) != len(p.ThreadTrees()) {
		t.Fatalf("%d profiles (%v) for %d threads", len(files), err, len(p.ThreadTrees()))
	}
	for _, f := range files {
		checkLayoutAsReal(t, f)
	}
	q, err := Build(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(q.Meta.EventNames()) != fmt.Sprint(p.Meta.EventNames()) || fmt.Sprint(q.EventTotals) != fmt.Sprint(p.EventTotals) {
		t.Errorf("events %v totals %v, read back %v totals %v", p.Meta.EventNames(), p.EventTotals, q.Meta.EventNames(), q.EventTotals)
	}
	if a, b := stackValues(p), stackValues(q); a != b {
		t.Errorf("stacks differ:\nwritten:\n%s\nread back:\n%s", a, b)
	}
	if a, b := treeText(p.Root), treeText(q.Root); a != b {
		t.Errorf("trees differ:\nwritten:\n%s\nread back:\n%s", a, b)
	}
	if len(q.ThreadTrees()) != len(p.ThreadTrees()) {
		t.Errorf("%d threads, read back %d", len(p.ThreadTrees()), len(q.ThreadTrees()))
	}
	if err := p.WriteHpcrun(dir); err == nil {
		t.Errorf("a second write over %s: no error", dir)
	}
	return q, dir
}

// stackValues lists every distinct stack, over all threads, with its
// values per event, one line each in order.
func stackValues(p *Profile) string {
	sums := map[string][]int64{}
	for s := range p.stacks.list {
		frames, partial := p.stacks.frames(s)
		var b strings.Builder
		if partial {
			b.WriteString("[partial]")
		}
		for i := len(frames) - 1; i >= 0; i-- {
			fmt.Fprintf(&b, " %s+%#x", frames[i].Mod.Path, frames[i].Addr)
		}
		k := b.String()
		sums[k] = append(sums[k], make([]int64, max(s.events()-len(sums[k]), 0))...)
		for ev, v := range s.values() {
			sums[k][ev] += v
		}
	}
	var lines []string
	for k, v := range sums {
		for len(v) > 0 && v[len(v)-1] == 0 {
			v = v[:len(v)-1]
		}
		lines = append(lines, fmt.Sprintf("%v%s", v, k))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// treeText prints a scope tree, children by label, with every count.
func treeText(n *Node) string {
	var b strings.Builder
	var walk func(n *Node, depth int)
	walk = func(n *Node, depth int) {
		fmt.Fprintf(&b, "%*s%s %d %d %v %v\n", 2*depth, "", n.Label, n.Incl, n.Excl, n.EvIncl, n.EvExcl)
		kids := append([]*Node(nil), n.Children...)
		sort.Slice(kids, func(i, j int) bool { return kids[i].Label < kids[j].Label })
		for _, c := range kids {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// realLayout is the strict walk of the real profile hpcrun 2023.08.1
// wrote: each field's width by section and name, and the bytes of the
// fields every profile of that version holds alike.
func realLayout(t *testing.T) []hpcrun.Field {
	t.Helper()
	name := filepath.Join(hpcrunMeas, "measurements", "prog-000000-000-007f0100-4247-0.hpcrun")
	data, err := os.ReadFile(name)
	if err != nil {
		testenv.Absent(t, "../shared/hpcrun-meas missing")
	}
	fields, err := hpcrun.Layout(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return fields
}

// checkLayoutAsReal walks a profile bloop wrote with the strict reader
// and compares it with the real one field by field: the same sections in
// the same order, the same fields, each of the real one's width; the
// same magic, version, endianness, header names, id-tuple dictionary
// and metric flags but for the values' form; its nodes at the real
// placeholders' roots.
func checkLayoutAsReal(t *testing.T, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := hpcrun.Layout(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	real := realLayout(t)
	width := map[string]int{}
	var realSecs, ourSecs []string
	same := map[string][]byte{}
	for _, f := range real {
		k := f.Section + "/" + f.Name
		width[k] = f.Width
		if n := len(realSecs); n == 0 || realSecs[n-1] != f.Section {
			realSecs = append(realSecs, f.Section)
		}
		switch k {
		case "header/magic", "header/version", "header/endianness", "header/pairs", "id-tuple dictionary/count":
			same[k] = f.Bytes
		}
	}
	var dict, realDict []byte
	for _, f := range real {
		if f.Section == "id-tuple dictionary" {
			realDict = append(realDict, f.Bytes...)
		}
	}
	for _, f := range ours {
		k := f.Section + "/" + f.Name
		w, ok := width[k]
		if !ok && f.Section != "gap" {
			t.Errorf("%s: field %s at %#x, not in the real profile", file, k, f.Off)
		}
		if ok && w != f.Width {
			t.Errorf("%s: field %s at %#x of %d bytes, the real one's %d", file, k, f.Off, f.Width, w)
		}
		if b, ok := same[k]; ok && !bytes.Equal(b, f.Bytes) {
			t.Errorf("%s: %s %q, the real one's %q", file, k, f.Bytes, b)
		}
		if k == "metric table/metric.flags" {
			// The values' form (byte 2) and show-percent may differ.
			rf := append([]byte(nil), f.Bytes...)
			rf[2] = 2
			if !bytes.Equal(rf, []byte{1, 0, 2, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}) {
				t.Errorf("%s: metric flags % x", file, f.Bytes)
			}
		}
		if f.Section == "id-tuple dictionary" {
			dict = append(dict, f.Bytes...)
		}
		if n := len(ourSecs); n == 0 || ourSecs[n-1] != f.Section {
			ourSecs = append(ourSecs, f.Section)
		}
	}
	if !bytes.Equal(dict, realDict) {
		t.Errorf("%s: id-tuple dictionary % x, the real one's % x", file, dict, realDict)
	}
	if fmt.Sprint(ourSecs) != fmt.Sprint(realSecs) {
		t.Errorf("%s: sections %q, the real one's %q", file, ourSecs, realSecs)
	}
}

// TestHpcrunRecording: a bloop recording of a testdata/prof program
// with threads, qsort's callbacks and libm, written as a measurement
// directory and read back.
func TestHpcrunRecording(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/prof/bin/unwind-gcc12-O2")
	opt := Options{Analyze: onlyModule(bin)}
	p, err := Build(rectest.Record(t, bin, "300", "2", "50"), opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.ThreadTrees()) < 2 || p.Samples < 50 {
		t.Fatalf("%d samples of %d threads: too few to compare", p.Samples, len(p.ThreadTrees()))
	}
	q, dir := hpcrunRoundTrip(t, p, opt)
	t.Logf("%d samples of %d threads, %d complete; read back %d values", p.Samples, len(p.ThreadTrees()), p.Outcomes[Complete], q.Samples)
	// The module sampled is flagged for analysis: bloop struct (and
	// hpcstruct) analyse it.
	d, err := meas.Read(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range d.Modules {
		found = found || m.Path == bin
	}
	if !found {
		t.Errorf("modules to analyse %+v: %s not among them", d.Modules, bin)
	}
}

// TestHpcrunHandMade: a recording whose samples do not unwind goes
// under hpcrun's partial root, and back under [partial].
func TestHpcrunHandMade(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/prof/bin/deep-gcc12-O2")
	testenv.NeedFile(t, bin, "testdata/prof (make -C testdata/prof)")
	opt := Options{Analyze: onlyModule(bin)}
	p, err := Build(rectest.Fake(t, bin, 0x1040, 0x1040, 0x1100), opt)
	if err != nil {
		t.Fatal(err)
	}
	hpcrunRoundTrip(t, p, opt)
	if p.Outcomes[Complete] != 0 || p.Samples != 3 {
		t.Errorf("%d samples, %d complete: want 3 partial", p.Samples, p.Outcomes[Complete])
	}
}

// TestHpcrunPerfData: perf.data files of real perf (two events, every
// call-graph mode: the IP alone, frame pointers' callchains with kernel
// frames, stack copies), written and read back.
func TestHpcrunPerfData(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/prof/bin/unwind-gcc12-O2")
	opt := Options{Analyze: onlyModule(bin)}
	for _, mode := range []struct {
		name string
		args []string
	}{{"plain", nil}, {"fp", []string{"-g"}}, {"dwarf", []string{"--call-graph", "dwarf"}}} {
		t.Run(mode.name, func(t *testing.T) {
			p, err := Build(perfRecord(t, mode.args, bin, "300", "2", "50"), opt)
			if err != nil {
				t.Fatal(err)
			}
			if p.EventSamples[0] < 50 {
				t.Fatalf("only %d cpu-clock samples", p.EventSamples[0])
			}
			hpcrunRoundTrip(t, p, opt)
		})
	}
}

// TestHpcrunMeasurement: the real measurement directory, read and
// written again, reads back the same (hpcrun's placeholders aside,
// which it has none of).
func TestHpcrunMeasurement(t *testing.T) {
	opt := Options{ModuleDirs: []string{hpcrunMeas}}
	p, err := Build(copyMeas(t, true), opt)
	if err != nil {
		t.Fatal(err)
	}
	hpcrunRoundTrip(t, p, opt)
}

// TestHpcrunProcesses: a hand-made perf.data of two processes, one with
// two threads, their samples not unwound (no stack copies): a profile
// per thread, each process a rank of its own in the id tuples and the
// file names, its threads numbered from its main thread.
func TestHpcrunProcesses(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/prof/bin/deep-gcc12-O2")
	testenv.NeedFile(t, bin, "testdata/prof (make -C testdata/prof)")
	const base = 0x555555554000
	var mmaps []rectest.PerfMmap
	for _, pid := range []uint32{40, 7} {
		mmaps = append(mmaps, rectest.PerfMmap{Pid: pid, Addr: base, Len: 0x10000, File: bin})
	}
	var samples []rectest.PerfSample
	for i, s := range []struct{ pid, tid uint32 }{{40, 40}, {7, 9}, {7, 7}, {7, 9}, {40, 40}} {
		ip := base + 0x1040 + uint64(i%2)*0x40
		// x86-64's bp, sp and ip (perf register numbers 6, 7, 8).
		samples = append(samples, rectest.PerfSample{Pid: s.pid, Tid: s.tid, Time: uint64(i + 1), IP: ip, Regs: []uint64{0, 0x7ffc00000000, ip}, StackSize: 8192})
	}
	opt := Options{Analyze: onlyModule(bin)}
	p, err := Build(rectest.PerfData(t, "x86_64", 1<<6|1<<7|1<<8, mmaps, samples), opt)
	if err != nil {
		t.Fatal(err)
	}
	_, dir := hpcrunRoundTrip(t, p, opt)
	files, _ := meas.Profiles(dir)
	var got []string
	for _, f := range files {
		hp, err := hpcrun.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %v %s", filepath.Base(f), hp.IDTuple, hp.Nodes[1].Placeholder()))
	}
	want := []string{
		"deep-gcc12-O2-000000-000-00000000-7-0.hpcrun [{16385 0 0} {49154 0 0} {49155 0 0}] | Main  ",
		"deep-gcc12-O2-000000-001-00000000-7-0.hpcrun [{16385 0 0} {49154 0 0} {49155 1 1}] | Thread",
		"deep-gcc12-O2-000001-000-00000000-40-0.hpcrun [{16385 0 0} {49154 1 1} {49155 0 0}] | Main  ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("profiles:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestHpcrunNothing: a recording without samples writes no directory
// that would read as a measurement of nothing; one line says why.
func TestHpcrunNothing(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/prof/bin/deep-gcc12-O2")
	testenv.NeedFile(t, bin, "testdata/prof (make -C testdata/prof)")
	p, err := Build(rectest.Fake(t, bin), Options{Analyze: onlyModule(bin)})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "m")
	err = p.WriteHpcrun(dir)
	if err == nil || !strings.Contains(err.Error(), "no samples") {
		t.Errorf("no samples: %v", err)
	}
	if meas.IsMeasurementDir(dir) {
		t.Errorf("%s holds profiles", dir)
	}
}

// TestHpcrunPerfDataFiles: the committed perf.data files of each perf
// record mode (perfevent/testdata: recorded on another machine, their
// modules found by name in testdata/prof/bin), written and read back,
// on any machine: the modules keep their recorded paths in the load map,
// and are found again by name; the kernel's frames, recorded on another
// kernel than this machine's, stay at their addresses both times.
func TestHpcrunPerfDataFiles(t *testing.T) {
	files, _ := filepath.Glob("../perfevent/testdata/*.data")
	if len(files) < 4 {
		t.Fatalf("%d perf.data files in perfevent/testdata", len(files))
	}
	bin, _ := filepath.Abs("../testdata/prof/bin")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			opt := Options{ModuleDirs: []string{bin}, Analyze: func(string) bool { return false }}
			p, err := Build(f, opt)
			if err != nil {
				t.Fatal(err)
			}
			// A module dir stands in for a recorded module only by its
			// build-id; the files without them (pipe mode, -z) had none
			// found, and a measurement directory, which has no build-ids,
			// is read back without them so.
			if _, err := os.Stat(strings.TrimSuffix(f, ".data") + ".buildids"); err != nil {
				opt.ModuleDirs = nil
			}
			hpcrunRoundTrip(t, p, opt)
		})
	}
}
