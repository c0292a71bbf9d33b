package profile

import (
	"os"
	"strconv"

	"bloop/cache"
	"bloop/perfevent"
	"bloop/sample"
)

// A perf.data file's skim (the first pass, everything but the samples)
// is kept in the report's cache, keyed by the file's identity (cache's:
// device, inode, size, modification and change times): a report of a
// file reported before (another view, --threads, --html) then reads its
// records once, not twice. The walk was 50 ms of a warm report of a
// 219 MiB file, and the module opens and kernel symbols beside it.

const skimKind = "perf.data skim 1"

// skimCached is sample.SkimPerfKept of path with the kept form in c
// (nil: none).
func skimCached(c *cache.Cache, path string, f func(sample.Entry) error) error {
	key := ""
	if c != nil {
		if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
			key = skimKey(st)
		}
	}
	if key == "" {
		return sample.SkimPerf(path, f)
	}
	return sample.SkimPerfKept(path, readEntry(c, key), func(b []byte) {
		// The file changed during the walk: its identity is not the key's.
		if st, err := os.Stat(path); err == nil && skimKey(st) == key {
			writeLocalEntry(c, key, b)
		}
	}, f)
}

// skimKey is the kept skim's key of a file of status st: its identity,
// and the size of the parts the skim notes (perfevent.PartBytes), which
// the replay gives the readers as they were kept.
func skimKey(st os.FileInfo) string {
	return cache.Key(skimKind, cache.Identity(st), strconv.FormatInt(perfevent.PartBytes, 10))
}
