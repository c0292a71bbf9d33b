package profile

import (
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
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
