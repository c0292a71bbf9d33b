package profile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/testenv"
	"bloop/sample"
)

// TestPerfCachedModule: a program rebuilt since perf recorded it is read
// from the copy perf record kept in its build-id cache, as perf report
// reads it: its samples get the recorded build's procedures. Without the
// copy they stay at their addresses, with a warning naming both builds.
func TestPerfCachedModule(t *testing.T) {
	testenv.Need(t, "perf")
	testenv.Need(t, "gcc")
	testenv.Capable(t, "perf_event_open", sample.Available())
	dir := t.TempDir()
	prog, src := filepath.Join(dir, "prog"), filepath.Join(dir, "prog.c")
	build := func(fn string) {
		t.Helper()
		code := fmt.Sprintf("volatile unsigned long n;\n__attribute__((noinline)) void %s(void) { for (unsigned long i = 0; i < 300000000UL; i++) n += i; }\nint main(void) { %s(); return 0; }\n", fn, fn)
		if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command("gcc", "-O1", "-g", "-o", prog, src).CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, b)
		}
	}
	build("recorded_spin")
	bid, data := t.TempDir(), filepath.Join(dir, "perf.data")
	rec := exec.Command("perf", "--buildid-dir", bid, "record", "-q", "-o", data, "-e", "cpu-clock", "-F", "999", "--", prog)
	if b, err := rec.CombinedOutput(); err != nil {
		testenv.Capable(t, fmt.Sprintf("perf record (%s)", b), err)
	}
	build("rebuilt_spin") // another build-id at the recorded path
	report := func() (procs, warnings string) {
		t.Helper()
		p, err := Build(data, Options{Jobs: 2, Analyze: func(string) bool { return false }})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		var walk func(n *Node)
		walk = func(n *Node) {
			if e := n.Elem; e != nil && e.Kind == ElemProc && e.Module == "prog" {
				names = append(names, e.Name)
			}
			for _, c := range n.Children {
				walk(c)
			}
		}
		walk(p.Root)
		return strings.Join(names, " "), strings.Join(p.Warnings, "\n")
	}
	t.Setenv("PERF_BUILDID_DIR", bid)
	if procs, warnings := report(); !strings.Contains(procs, "recorded_spin") || strings.Contains(warnings, "prog") {
		t.Errorf("with perf's copy: procedures %q, warnings %q; want recorded_spin and no warning of prog", procs, warnings)
	}
	t.Setenv("PERF_BUILDID_DIR", filepath.Join(dir, "none"))
	if procs, warnings := report(); strings.Contains(procs, "_spin") || !strings.Contains(warnings, "recorded") {
		t.Errorf("without it: procedures %q, warnings %q; want none named and a warning of the builds", procs, warnings)
	}
}
