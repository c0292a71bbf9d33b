package profile

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"bloop/cache"
	"bloop/sample"
)

// BenchmarkBuild reports committed perf.data files with their pprof
// profile: dwarf.data's samples unwound by bloop, fp.data's callchains
// taken as perf recorded them. Modules are not analysed (symbols and
// lines only), so reading, unwinding and insertion are what is timed.
func BenchmarkBuild(b *testing.B) {
	bin, _ := filepath.Abs("../testdata/prof/bin")
	for _, name := range []string{"dwarf", "fp"} {
		b.Run(name, func(b *testing.B) {
			path := filepath.Join("../perfevent/testdata", name+".data")
			for i := 0; i < b.N; i++ {
				p, err := Build(path, Options{ModuleDirs: []string{bin}, Analyze: func(string) bool { return false }})
				if err != nil {
					b.Fatal(err)
				}
				if err := p.WritePprof(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSortAddrs: a million module addresses, radix against
// slices.Sort.
func BenchmarkSortAddrs(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	as := make([]uint64, 1<<20)
	for i := range as {
		as[i] = 0x400000 + r.Uint64N(30<<20)
	}
	work := make([]uint64, len(as))
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			copy(work, as)
			sortAddrs(work)
		}
	})
	b.Run("slices.Sort", func(b *testing.B) {
		for b.Loop() {
			copy(work, as)
			slices.Sort(work)
		}
	})
}

// BenchmarkReadStages times the reading of a perf.data file's samples
// one stage more at a time, on one goroutine: the records walked, their
// callchain keys read in place, hashed, looked up in the memo. The
// differences are each stage's cost (docs/benchmarks.md). The file is
// $BLOOP_BENCH_PERFDATA (a large frame-pointer recording), else the
// committed fp.data.
func BenchmarkReadStages(b *testing.B) {
	path := os.Getenv("BLOOP_BENCH_PERFDATA")
	if path == "" {
		path = "../perfevent/testdata/fp.data"
	}
	src, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	r, ok := src.(*recording)
	if !ok || r.lazy == nil {
		b.Skipf("%s: not a perf.data file read lazily", path)
	}
	p := newProfile(Options{Jobs: 1})
	p.sp = newSpaceFor(Options{})
	if err := r.prepare(p); err != nil {
		b.Fatal(err)
	}
	// Each stage's last step, on the sample's key k when keyed.
	stages := []struct {
		name  string
		keyed bool
		f     func(m *chainMemo, k *sample.ChainKey) uint64
	}{
		{"walk", false, func(*chainMemo, *sample.ChainKey) uint64 { return 1 }},
		{"key", true, func(_ *chainMemo, k *sample.ChainKey) uint64 { return k.IP }},
		{"hash", true, func(m *chainMemo, k *sample.ChainKey) uint64 { h, _ := m.hash(p.sp, k); return h }},
		{"lookup", true, func(m *chainMemo, k *sample.ChainKey) uint64 { slot, _ := m.slotOf(p.sp, k); return uint64(slot) }},
	}
	var sink uint64
	for _, st := range stages {
		b.Run(st.name, func(b *testing.B) {
			m := &chainMemo{}
			var k sample.ChainKey // one for all: st.f's argument escapes
			for b.Loop() {
				err := r.lazy(path, func(e sample.Entry) error {
					if v, ok := e.(*sample.PerfSample); ok {
						k = sample.ChainKey{}
						if st.keyed {
							v.Chain(&k)
						}
						sink += st.f(m, &k)
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	if sink == 0 {
		b.Fatal("no sample read")
	}
}

// BenchmarkPlace times the placing of a report's stacks in the merged
// tree (Profile.fileTrees), what runs on one core after the reading:
// of $BLOOP_BENCH_PERFDATA with the structure cache ($BLOOP_BENCH_CACHE,
// filled by a report before), else of the committed fp.data with its
// modules' symbols only.
func BenchmarkPlace(b *testing.B) {
	path, opt := os.Getenv("BLOOP_BENCH_PERFDATA"), Options{}
	if path == "" {
		bin, _ := filepath.Abs("../testdata/prof/bin")
		path, opt = "../perfevent/testdata/fp.data", Options{ModuleDirs: []string{bin}, Analyze: func(string) bool { return false }}
	} else if dir := os.Getenv("BLOOP_BENCH_CACHE"); dir != "" {
		c, err := cache.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		opt.Cache = c
	}
	p, err := Build(path, opt)
	if err != nil {
		b.Fatal(err)
	}
	total := p.Total
	for b.Loop() {
		b.StopTimer()
		p.Root, p.Total = &Node{Label: p.Root.Label}, 0
		runtime.GC() // the last tree's, not the placing's to collect
		b.StartTimer()
		p.fileTrees(false)
	}
	if p.Total != total {
		b.Fatalf("placed %d samples, the report %d", p.Total, total)
	}
}
