package pipeline

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"bloop/loader"
	"bloop/structure"
)

// Large real binaries (Debian -dbg packages); each benchmark is skipped
// when its package is not installed.
var benchBinaries = map[string]string{
	"libstdc++": "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30",
	"libgsl":    "/usr/lib/x86_64-linux-gnu/libgsl.so.27",
	"python":    "/usr/bin/python3.11",
	"libjvm":    "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so",
	"vmlinux":   "/usr/lib/debug/boot/vmlinux-*",
}

func benchBinary(b *testing.B, name string) string {
	matches, _ := filepath.Glob(benchBinaries[name])
	if len(matches) == 0 {
		b.Skipf("%s not installed", benchBinaries[name])
	}
	return matches[len(matches)-1]
}

// BenchmarkLoad times Open for the default engine: sections, symbols,
// DWARF procedures and inline trees, line table.
func BenchmarkLoad(b *testing.B) {
	for _, name := range []string{"libstdc++", "libgsl", "python", "libjvm", "vmlinux"} {
		b.Run(name, func(b *testing.B) {
			path := benchBinary(b, name)
			if _, err := os.Stat(path); err != nil {
				b.Skip(err)
			}
			for i := 0; i < b.N; i++ {
				if _, err := Open(path, loader.Options{Workers: runtime.GOMAXPROCS(0)}, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAnalyze times Run (CFGs, loops, placement) on a loaded image,
// writing nowhere.
func BenchmarkAnalyze(b *testing.B) {
	for _, name := range []string{"libstdc++", "libgsl", "python", "libjvm", "vmlinux"} {
		b.Run(name, func(b *testing.B) {
			img, err := Open(benchBinary(b, name), loader.Options{}, Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Run(img, Options{}, func(string, *structure.Scope) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
