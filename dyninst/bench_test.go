package dyninst

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"bloop/loader"
)

// BenchmarkDiscovery times compat mode's procedure discovery on stripped
// libraries, whose procedures are found in rounds: reusing the parses of
// earlier rounds (memo) against parsing every round afresh.
func BenchmarkDiscovery(b *testing.B) {
	for _, lib := range []string{"libzstd.so.1", "libcrypto.so.3"} {
		path := filepath.Join("/usr/lib/x86_64-linux-gnu", lib)
		for _, memo := range []bool{true, false} {
			name := lib + "/fresh"
			if memo {
				name = lib + "/memo"
			}
			b.Run(name, func(b *testing.B) {
				if _, err := os.Stat(path); err != nil {
					b.Skip(err)
				}
				img, err := loader.Open(path, loader.Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					var m *parseMemo
					if memo {
						m = newParseMemo()
					}
					Hpcstruct.discover(img, runtime.GOMAXPROCS(0), m)
				}
			})
		}
	}
}
