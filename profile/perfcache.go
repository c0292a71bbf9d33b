package profile

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"os"
	"path/filepath"

	"bloop/loader"
	"bloop/perfevent"
)

// perf record keeps in its build-id cache a copy of each module its
// samples hit and of the kernel's kallsyms, by build-id, and perf report
// reads them there when the file at the recorded path is another build
// (rebuilt, upgraded) or gone; perf archive carries them to other
// machines. A report reads them too.

// perfBuildIDDir is perf's build-id cache: $PERF_BUILDID_DIR (what perf
// tells the commands it runs), else ~/.debug ("" when there is no home).
func perfBuildIDDir() string {
	if d := os.Getenv("PERF_BUILDID_DIR"); d != "" {
		return d
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".debug")
	}
	return ""
}

// perfKallsyms is the copy of /proc/kallsyms kept for the kernel of
// build-id id, "" when there is none: a plain file, where /proc/kallsyms
// costs the kernel 50 ms to write out. perf copies it at the first
// recording of that kernel: it can be of an earlier boot.
func perfKallsyms(id []byte) string {
	dir := perfBuildIDDir()
	if len(id) == 0 || dir == "" {
		return ""
	}
	p := filepath.Join(dir, perfevent.KernelMap, hex.EncodeToString(id), "kallsyms")
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return p
}

// perfCachedModule opens the copy kept of the module of build-id id, or
// returns nil: .build-id/XX/REST names the directory holding it as elf
// (perf 4.10 on), or the file itself (before).
func perfCachedModule(id []byte) (*elf.File, string) {
	dir := perfBuildIDDir()
	if len(id) < 2 || dir == "" {
		return nil, ""
	}
	h := hex.EncodeToString(id)
	link := filepath.Join(dir, ".build-id", h[:2], h[2:])
	for _, p := range []string{filepath.Join(link, "elf"), link} {
		if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
			continue
		}
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		if bytes.Equal(loader.BuildID(f), id) {
			return f, p
		}
		f.Close()
	}
	return nil, ""
}
