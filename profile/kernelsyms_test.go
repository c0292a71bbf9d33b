package profile

import (
	"bloop/internal/testenv"
	"bloop/sample"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestKernelSymbolsOfTheRecording: a perf.data file's kernel frames are
// named from the copy of kallsyms perf record kept in its build-id
// cache, even where /proc/kallsyms cannot be read and the running kernel
// is another; and neither that copy nor /proc/kallsyms is used when it
// puts the kernel where the recording's boot did not (another boot:
// KASLR), which a copy moved by 2 MiB stands for.
func TestKernelSymbolsOfTheRecording(t *testing.T) {
	testenv.Need(t, "perf")
	testenv.Capable(t, "perf_event_open", sample.Available())
	bid, data := t.TempDir(), filepath.Join(t.TempDir(), "perf.data")
	rec := exec.Command("perf", "--buildid-dir", bid, "record", "-q", "-o", data, "-e", "cpu-clock", "-g", "-F", "999",
		"--", "dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=1500000")
	if b, err := rec.CombinedOutput(); err != nil {
		testenv.Capable(t, fmt.Sprintf("perf record (%s)", b), err)
	}
	t.Setenv("PERF_BUILDID_DIR", bid)
	copies, _ := filepath.Glob(filepath.Join(bid, "[[]kernel.kallsyms]", "*", "kallsyms"))
	if len(copies) != 1 {
		t.Fatalf("perf record kept %d copies of kallsyms in %s, want 1", len(copies), bid)
	}
	real, err := os.ReadFile(copies[0])
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	moved, other, noBID := filepath.Join(dir, "moved"), filepath.Join(dir, "osrelease"), filepath.Join(dir, "none")
	for name, b := range map[string][]byte{moved: moveKallsyms(t, real, 2<<20), other: []byte("0.0.0-another\n")} {
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	saved := [2]string{kallsymsFile, releaseFile}
	defer func() { kallsymsFile, releaseFile = saved[0], saved[1] }()
	report := func(t *testing.T) (names []string, kerr error) {
		t.Helper()
		p, err := Build(data, Options{Jobs: 2, Analyze: func(string) bool { return false }})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range p.Modules {
			if m.Name == "[kernel]" {
				kerr = m.Err
			}
		}
		var walk func(n *Node)
		walk = func(n *Node) {
			if e := n.Elem; e != nil && e.Kind == ElemProc && e.Module == "[kernel]" {
				names = append(names, e.Name)
			}
			for _, c := range n.Children {
				walk(c)
			}
		}
		walk(p.Root)
		slices.Sort(names)
		return slices.Compact(names), kerr
	}
	named := func(names []string) int {
		n := 0
		for _, s := range names {
			if !strings.HasPrefix(s, "[kernel]@") {
				n++
			}
		}
		return n
	}

	// The copy, /proc/kallsyms of the same boot: the same names.
	want, err := report(t)
	if err != nil || named(want) == 0 {
		t.Fatalf("no kernel frame named (%d procedures: %.5q; %v)", len(want), want, err)
	}
	// The copy alone: /proc/kallsyms unreadable, another running kernel.
	kallsymsFile, releaseFile = filepath.Join(dir, "absent"), other
	if got, err := report(t); err != nil || !slices.Equal(got, want) {
		t.Errorf("from perf's copy only: %d names, %d named (%v), want the %d of both", len(got), named(got), err, len(want))
	}
	kallsymsFile, releaseFile = saved[0], saved[1]
	// No copy: /proc/kallsyms, of the same boot.
	t.Setenv("PERF_BUILDID_DIR", noBID)
	if got, err := report(t); err != nil || !slices.Equal(got, want) {
		t.Errorf("from %s: %d names, %d named (%v), want %d", kallsymsFile, len(got), named(got), err, len(want))
	}
	// No copy, and /proc/kallsyms of another boot; then a copy of another.
	kallsymsFile = moved
	checkRefused := func(what string) {
		t.Helper()
		got, err := report(t)
		if err == nil || !strings.Contains(err.Error(), "recording's boot") || named(got) != 0 {
			t.Errorf("%s of another boot: %d named (of %d), error %v; want none named and the boot named", what, named(got), len(got), err)
		}
	}
	checkRefused(kallsymsFile)
	kallsymsFile = saved[0]
	t.Setenv("PERF_BUILDID_DIR", bid)
	if err := os.WriteFile(copies[0], moveKallsyms(t, real, 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	checkRefused("perf's copy")
}

// moveKallsyms is a kallsyms text with every address by off higher.
func moveKallsyms(t *testing.T, b []byte, off uint64) []byte {
	t.Helper()
	var out strings.Builder
	for _, line := range strings.SplitAfter(string(b), "\n") {
		addr, rest, ok := strings.Cut(line, " ")
		a, err := strconv.ParseUint(addr, 16, 64)
		if !ok || err != nil || a == 0 {
			out.WriteString(line)
			continue
		}
		fmt.Fprintf(&out, "%016x %s", a+off, rest)
	}
	return []byte(out.String())
}
