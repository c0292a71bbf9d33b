package profile

import (
	"io"
	"path/filepath"
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
