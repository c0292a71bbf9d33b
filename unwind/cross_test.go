package unwind

import (
	"bloop/internal/testenv"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// crossLibs are Debian's cross libraries (libc6-arm64-cross,
// libstdc++6-arm64-cross and the ppc64el ones), whose .eh_frame the
// recipes of aarch64 and ppc64le code are checked against.
var crossLibs = []string{
	"/usr/aarch64-linux-gnu/lib/libc.so.6", "/usr/aarch64-linux-gnu/lib/libstdc++.so.6",
	"/usr/powerpc64le-linux-gnu/lib/libc.so.6", "/usr/powerpc64le-linux-gnu/lib/libstdc++.so.6",
}

// TestRecipeAccuracyCross is TestRecipeAccuracy for aarch64 and ppc64le:
// the cross libraries (skipped when absent) and the cross corpus. At
// least 99.5% of the instructions of each library, and of each
// architecture, must agree.
func TestRecipeAccuracyCross(t *testing.T) {
	type arch struct {
		name, libDir, corpus string
	}
	for _, a := range []arch{{"arm64", "/usr/aarch64-linux-gnu/lib", "../testdata/bin-arm64"}, {"ppc64le", "/usr/powerpc64le-linux-gnu/lib", "../testdata/bin-ppc64le"}} {
		t.Run(a.name, func(t *testing.T) {
			var paths []string
			if !testing.Short() {
				for _, l := range crossLibs {
					if filepath.Dir(l) == a.libDir {
						paths = append(paths, l)
					}
				}
			}
			corpus, _ := filepath.Glob(filepath.Join(a.corpus, "*-O[0-3]"))
			paths = append(paths, corpus...)
			maxBad := 0
			if os.Getenv("UNWIND_DEBUG") != "" {
				maxBad = 100000
			}
			var all, libs agreement
			var mu sync.Mutex
			t.Run("bins", func(t *testing.T) {
				for _, p := range paths {
					t.Run(filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p), func(t *testing.T) {
						t.Parallel()
						testenv.NeedFile(t, p, "a cross library (libc6-*-cross, libstdc++6-*-cross)")

						r := compareLogged(t, p, maxBad)
						if filepath.Dir(p) == a.libDir && r.pct() < 99.5 {
							t.Errorf("%s: only %.2f%% agreement", p, r.pct())
						}
						mu.Lock()
						defer mu.Unlock()
						all.agree += r.agree
						all.compared += r.compared
						if filepath.Dir(p) == a.libDir {
							libs.agree += r.agree
							libs.compared += r.compared
						}
					})
				}
			})
			bins := agreement{agree: all.agree - libs.agree, compared: all.compared - libs.compared}
			t.Logf("%s: all %.3f%% of %d, libraries %.3f%% of %d, corpus %.3f%% of %d", a.name, all.pct(), all.compared, libs.pct(), libs.compared, bins.pct(), bins.compared)
			if all.pct() < 99.5 {
				t.Errorf("%s: only %.3f%% of %d instructions agree", a.name, all.pct(), all.compared)
			}
		})
	}
}
