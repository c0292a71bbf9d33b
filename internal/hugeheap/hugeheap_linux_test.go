package hugeheap

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestAdvise: where the kernel gives huge pages when advised, memory the
// heap grows into after Advise is backed by them (smaps' AnonHugePages).
func TestAdvise(t *testing.T) {
	mode, err := os.ReadFile(modeFile)
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		t.Skipf("transparent huge pages are not given when advised here (%s: %q)", modeFile, bytes.TrimSpace(mode))
	}
	if !Advise() {
		t.Fatal("Advise did not advise, in madvise mode")
	}
	b := make([]byte, 64<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	huge := anonHugeKB(t, p, p+uintptr(len(b)))
	if huge == 0 {
		t.Fatalf("64 MiB of heap touched after Advise: no huge pages in its mappings")
	}
	t.Logf("%d KiB of the 64 MiB in huge pages", huge)
}

// anonHugeKB sums AnonHugePages of the mappings that overlap [lo, hi).
func anonHugeKB(t *testing.T, lo, hi uintptr) int {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sum, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if from, to, ok := strings.Cut(strings.Fields(line)[0], "-"); ok && !strings.HasSuffix(line, ":") && !strings.Contains(from, ":") {
			a, err1 := strconv.ParseUint(from, 16, 64)
			z, err2 := strconv.ParseUint(to, 16, 64)
			in = err1 == nil && err2 == nil && uintptr(a) < hi && lo < uintptr(z)
			continue
		}
		if rest, ok := strings.CutPrefix(line, "AnonHugePages:"); ok && in {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err != nil {
				t.Fatalf("smaps line %q: %v", line, err)
			}
			sum += n
		}
	}
	return sum
}

// TestWanted: the advice is given in madvise mode only, and not where it
// could cost the process its memory.
func TestWanted(t *testing.T) {
	dir := t.TempDir()
	defer func(m, o string) { modeFile, overcommitFile = m, o }(modeFile, overcommitFile)
	modeFile, overcommitFile = filepath.Join(dir, "enabled"), filepath.Join(dir, "overcommit")
	write := func(name, s string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, mode, overcommit, godebug string
		limit                           bool
		want                            bool
	}{
		{"madvise", "always [madvise] never\n", "0\n", "", false, true},
		{"always", "[always] madvise never\n", "0\n", "", false, false},
		{"never", "always madvise [never]\n", "0\n", "", false, false},
		{"no file", "", "0\n", "", false, false},
		{"strict overcommit", "always [madvise] never\n", "2\n", "", false, false},
		{"no overcommit file", "always [madvise] never\n", "", "", false, true},
		{"GODEBUG", "always [madvise] never\n", "1\n", "gctrace=0,disablethp=1", false, false},
		{"memory limit", "always [madvise] never\n", "0\n", "", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(modeFile)
			os.Remove(overcommitFile)
			if c.mode != "" {
				write("enabled", c.mode)
			}
			if c.overcommit != "" {
				write("overcommit", c.overcommit)
			}
			t.Setenv("GODEBUG", c.godebug)
			if c.limit {
				old := debug.SetMemoryLimit(1 << 40)
				defer debug.SetMemoryLimit(old)
			}
			if got := wanted(); got != c.want {
				t.Errorf("wanted() = %v, want %v", got, c.want)
			}
		})
	}
	if debug.SetMemoryLimit(-1) != math.MaxInt64 {
		t.Fatal("memory limit left set")
	}
}

func TestHugePageSize(t *testing.T) {
	defer func(f string) { pageSizeFile = f }(pageSizeFile)
	pageSizeFile = filepath.Join(t.TempDir(), "size")
	for _, c := range []struct {
		text string
		want uintptr
	}{
		{"2097152\n", 2 << 20},
		{"536870912\n", 512 << 20},
		{"3\n", 2 << 20},
		{"huge\n", 2 << 20},
		{"", 2 << 20},
		{"0\n", 2 << 20},
	} {
		if err := os.WriteFile(pageSizeFile, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := hugePageSize(); got != c.want {
			t.Errorf("%q: %d, want %d", c.text, got, c.want)
		}
	}
	os.Remove(pageSizeFile)
	if got := hugePageSize(); got != 2<<20 {
		t.Errorf("no file: %d, want 2 MiB", got)
	}
}
