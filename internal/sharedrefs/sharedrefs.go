// Package sharedrefs finds, for tests, reference files of the shared
// corpus (../shared beside the repository) that more than one package
// compares against.
package sharedrefs

import (
	"os"
	"path/filepath"
	"strings"
)

// GPUCFG pairs each structure file hpcstruct --gpucfg yes wrote
// (shared/hpctoolkit-cuda/struct/NAME+gpucfg.hpcstruct) with its cubin,
// shared/hpctoolkit-cuda/bin/NAME or else shared/hpctoolkit-tests/bin/NAME;
// a reference without its cubin is left out. shared is the corpus's
// directory as the caller reaches it.
func GPUCFG(shared string) (bins, refs []string) {
	found, _ := filepath.Glob(filepath.Join(shared, "hpctoolkit-cuda", "struct", "*+gpucfg.hpcstruct"))
	for _, ref := range found {
		name := strings.TrimSuffix(filepath.Base(ref), "+gpucfg.hpcstruct")
		for _, dir := range []string{"hpctoolkit-cuda", "hpctoolkit-tests"} {
			bin := filepath.Join(shared, dir, "bin", name)
			if _, err := os.Stat(bin); err == nil {
				bins, refs = append(bins, bin), append(refs, ref)
				break
			}
		}
	}
	return bins, refs
}
