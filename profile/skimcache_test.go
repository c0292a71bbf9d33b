package profile

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"bloop/cache"
	"bloop/perfevent"
)

// TestSkimCache: a report of a perf.data file with a cache keeps the
// file's skim, and a report of it again replays the skim: the same
// profile as without a cache, at -j 1 and in parts. A file changed since
// (its modification time) is walked again, and its skim kept anew; so is
// one read in parts of another size.
func TestSkimCache(t *testing.T) {
	defer func(n int64) { perfevent.PartBytes = n }(perfevent.PartBytes)
	perfevent.PartBytes = 600
	bin, files := committedRecordings(t, false)
	prog := filepath.Join(bin, "unwind-gcc12-O2")
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			// A copy: the test changes its times.
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := cache.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			build := func(c *cache.Cache, jobs int) string {
				t.Helper()
				p, err := Build(path, Options{Jobs: jobs, Cache: c, ModuleDirs: []string{bin}, Analyze: onlyModule(prog)})
				if err != nil {
					t.Fatal(err)
				}
				return dumpProfile(t, p)
			}
			want := build(nil, 1)
			kept := func() bool {
				st, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				return readEntry(c, skimKey(st)) != nil
			}
			// Files read in parts are kept (not the pipe or compressed ones).
			parts := name == "fp.data" || name == "plain.data" || name == "dwarf.data"
			for i, jobs := range []int{1, 4, 1, 4} {
				if got := build(c, jobs); got != want {
					t.Fatalf("report %d (-j %d) with the cache:\n%s\nwant\n%s", i, jobs, got, want)
				}
				if kept() != parts {
					t.Fatalf("report %d: skim kept %v, want %v", i, kept(), parts)
				}
			}
			// walkedAgain: after what, no skim is kept for the file; a
			// report walks it, gives the same profile and keeps its skim.
			walkedAgain := func(what string) {
				t.Helper()
				if kept() {
					t.Fatalf("%s: a skim kept before the report", what)
				}
				if got := build(c, 4); got != want {
					t.Fatalf("report of the %s:\n%s\nwant\n%s", what, got, want)
				}
				if kept() != parts {
					t.Fatalf("%s: skim kept %v, want %v", what, kept(), parts)
				}
			}
			later := time.Now().Add(time.Minute)
			if err := os.Chtimes(path, later, later); err != nil {
				t.Fatal(err)
			}
			walkedAgain("file changed since")
			// The parts kept are of the size they were noted at: a skim of
			// other parts is another entry.
			perfevent.PartBytes = 900
			walkedAgain("file in parts of 900 bytes")
			perfevent.PartBytes = 600
		})
	}
}
