package profile

import (
	"os"
	"testing"
)

// BenchmarkParseKallsyms parses the running kernel's symbols (5.4 MB,
// 122,000 lines on Debian 12's cloud kernel): what a report without the
// cache, or of a recording perf kept kallsyms for, spends on them.
func BenchmarkParseKallsyms(b *testing.B) {
	data, err := os.ReadFile(kallsymsFile)
	if err != nil {
		b.Skip(err)
	}
	if len(parseKallsyms(append([]byte(nil), data...)).syms.list()) == 0 {
		b.Skip("no addresses (kernel.kptr_restrict)")
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		parseKallsyms(append([]byte(nil), data...))
	}
}
