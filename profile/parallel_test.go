package profile

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"bloop/cache"
	"bloop/internal/rectest"
	"bloop/perfevent"
	"bloop/sample"
)

// TestJobsSameProfile builds each committed perf.data file, and a
// recording of a threaded program, with one reader and with four
// workers unwinding batches of three samples, the files without stack
// copies read in parts of a few samples by four readers: the trees, the
// unwind's figures and the pprof profile must be the same bytes.
func TestJobsSameProfile(t *testing.T) {
	defer func(n int) { batchLen = n }(batchLen)
	batchLen = 3
	defer func(n int64) { perfevent.PartBytes = n }(perfevent.PartBytes)
	perfevent.PartBytes = 600
	bin, files := committedRecordings(t, false)
	type input struct {
		path string
		opt  Options
	}
	var inputs []input
	for _, f := range files {
		inputs = append(inputs, input{f, Options{ModuleDirs: []string{bin}, Analyze: onlyModule(filepath.Join(bin, "unwind-gcc12-O2"))}})
	}
	prog := filepath.Join(bin, "unwind-gcc12-O2")
	inputs = append(inputs, input{rectest.Record(t, prog, "100", "2", "200"), Options{Analyze: onlyModule(prog)}})
	for _, in := range inputs {
		t.Run(filepath.Base(in.path), func(t *testing.T) {
			var dumps [2]string
			for i, jobs := range []int{1, 4} {
				opt := in.opt
				opt.Jobs = jobs
				p, err := Build(in.path, opt)
				if err != nil {
					t.Fatal(err)
				}
				dumps[i] = dumpProfile(t, p)
				// The files perf record wrote without stack copies
				// (the pipe and compressed ones are one part).
				name := filepath.Base(in.path)
				if parts := jobs > 1 && (name == "fp.data" || name == "plain.data"); parts != (p.partsRead > 2) {
					t.Errorf("-j %d: read in %d parts", jobs, p.partsRead)
				}
			}
			if dumps[0] != dumps[1] {
				t.Errorf("-j 1 and -j 4 differ:\n%s\n----\n%s", dumps[0], dumps[1])
			}
		})
	}
}

// dumpProfile is everything a view or the pprof output shows of p.
func dumpProfile(t *testing.T, p *Profile) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "samples %d total %d chains %d outcomes %v fp %v fpsteps %d truncated %d stackuse %d\n",
		p.Samples, p.Total, p.Chains, p.Outcomes, p.FPOutcomes, p.FPSteps, p.Truncated, p.StackUse)
	var reasons []string
	for r, n := range p.Reasons {
		reasons = append(reasons, fmt.Sprintf("%s=%d", r, n))
	}
	sort.Strings(reasons)
	fmt.Fprintln(&b, reasons, p.EventSamples, p.EventTotals)
	var dump func(n *Node, depth int)
	dump = func(n *Node, depth int) {
		name := n.Label
		if n.Elem != nil {
			name = fmt.Sprintf("%v %s %s %s:%d", n.Elem.Kind, n.Elem.Name, n.Elem.Module, n.Elem.File, n.Elem.Line)
		}
		fmt.Fprintf(&b, "%*s%s %d %d %v %v\n", depth, "", name, n.Incl, n.Excl, n.EvIncl, n.EvExcl)
		for _, c := range n.Children {
			dump(c, depth+1)
		}
	}
	dump(p.Root, 0)
	var tids []uint32
	for tid := range p.ThreadTrees() {
		tids = append(tids, tid)
	}
	sort.Slice(tids, func(i, j int) bool { return tids[i] < tids[j] })
	for _, tid := range tids {
		dump(p.ThreadTrees()[tid], 0)
	}
	if err := p.WritePprof(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSampledAnalysis builds each committed perf.data file and a
// recording with every module's procedures analysed and with only the
// sampled ones: the same trees, scope by scope, and the same pprof
// profile. Every module is analysed (libc, libm, the program).
func TestSampledAnalysis(t *testing.T) {
	bin, files := committedRecordings(t, true)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			var dumps [2]string
			for i, whole := range []bool{true, false} {
				p, err := Build(f, Options{ModuleDirs: []string{bin}, WholeModules: whole, Jobs: 2})
				if err != nil {
					t.Fatal(err)
				}
				dumps[i] = dumpProfile(t, p)
			}
			if dumps[0] != dumps[1] {
				t.Errorf("whole modules and sampled procedures differ:\n%s\n----\n%s", dumps[0], dumps[1])
			}
		})
	}
}

// TestWarmCacheSameProfile: a report whose modules' scope indexes and
// unwinding bounds come from the cache (warm) equals one without a cache
// (cold), and the one that filled the cache.
func TestWarmCacheSameProfile(t *testing.T) {
	bin, files := committedRecordings(t, true)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			c, err := cache.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			var dumps [3]string
			for i, cc := range []*cache.Cache{nil, c, c} {
				p, err := Build(f, Options{ModuleDirs: []string{bin}, Cache: cc, Jobs: 2})
				if err != nil {
					t.Fatal(err)
				}
				dumps[i] = dumpProfile(t, p)
			}
			if dumps[0] != dumps[1] || dumps[0] != dumps[2] {
				t.Errorf("cold, filling the cache and warm differ:\n%s\n----\n%s\n----\n%s", dumps[0], dumps[1], dumps[2])
			}
		})
	}
}

// committedRecordings returns testdata/prof/bin (the modules of the
// committed perf.data files, found by name) and those files, failing
// the test when fewer than six are there; fresh adds a recording of
// unwind-gcc12-O2 made now.
func committedRecordings(t *testing.T, fresh bool) (bin string, files []string) {
	t.Helper()
	bin, _ = filepath.Abs("../testdata/prof/bin")
	files, _ = filepath.Glob("../perfevent/testdata/*.data")
	if len(files) < 6 {
		t.Fatalf("committed perf.data files: %v", files)
	}
	if fresh {
		files = append(files, rectest.Record(t, filepath.Join(bin, "unwind-gcc12-O2"), "100", "2", "200"))
	}
	return bin, files
}

// TestBatchSpan: a batch is full at batchLen samples without stacks, and
// at batchBytes of stacks, copied or read in place, those in place
// counted by the whole copy the record holds (the span of the file the
// workers read), not the part the kernel filled.
func TestBatchSpan(t *testing.T) {
	for _, c := range []struct {
		name string
		s    sample.Sample
		want int
	}{
		{"callchains", sample.Sample{Callchain: []uint64{1, 2, 3}}, batchLen},
		{"in place, 8 KiB copies", sample.Sample{StackKept: true, StackSize: 8192, Stack: make([]byte, 100)}, batchBytes / 8192},
		{"in place, 32 KiB copies", sample.Sample{StackKept: true, StackSize: 32768, Stack: make([]byte, 32768)}, batchBytes / 32768},
		{"copied", sample.Sample{StackSize: 8192, Stack: make([]byte, 4096)}, batchBytes / 4096},
	} {
		var b batch
		n := 0
		for !b.full() && n <= batchLen {
			b.take(&c.s, 0)
			n++
		}
		if n != c.want {
			t.Errorf("%s: full after %d samples, want %d", c.name, n, c.want)
		}
	}
}
