package perfevent

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.script and *.buildids with perf script and perf buildid-list")

// committed are the perf.data files in testdata (see its README) and
// how to compare them with perf script: with callchains or with the
// sampled IP.
var committed = []struct {
	name       string
	callchains bool
	pipe       bool
	stack      uint64 // bytes of user stack per sample (dwarf mode)
}{
	{"plain", false, false, 0},
	{"fp", true, false, 0},
	{"dwarf", false, false, 2048},
	{"pipe", false, true, 0},
	{"zstd", false, false, 0},
	{"pipe-zstd-dwarf", false, true, 1024},
}

// runPerf runs perf with args and returns its output.
func runPerf(args ...string) (string, error) {
	var out, stderr bytes.Buffer
	cmd := exec.Command("perf", args...)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("perf %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out.String(), nil
}

// scriptOf runs perf script on a file as the comparison needs it.
func scriptOf(path string, callchains bool) (string, error) {
	args := append([]string{"script", "-i", path}, scriptArgs...)
	if !callchains {
		args = append(args, "-G")
	}
	return runPerf(args...)
}

// TestCommittedFiles reads the committed recordings and compares them
// with perf script's and perf buildid-list's output of the same files,
// saved beside them (-update rewrites those with the perf at hand).
func TestCommittedFiles(t *testing.T) {
	for _, c := range committed {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join("testdata", c.name+".data")
			if *update {
				updateGolden(t, path, c.callchains)
			}
			script, err := os.ReadFile(strings.TrimSuffix(path, ".data") + ".script")
			if err != nil {
				t.Fatal(err)
			}
			f := openAgainstScript(t, path, string(script), c.callchains)
			ids, err := os.ReadFile(strings.TrimSuffix(path, ".data") + ".buildids")
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			checkBuildIDs(t, f, string(ids))
			if f.Pipe != c.pipe || len(f.Events) != 2 || f.Events[0].Name != "task-clock" || f.Events[1].Name != "page-faults" {
				t.Errorf("pipe %v, events %v %v", f.Pipe, f.Events[0], f.Events[1])
			}
			if !slices.Contains(f.Features.Cmdline, "record") || f.Features.Arch != "x86_64" || f.Features.NrCPUsOnline == 0 {
				t.Errorf("features %+v", f.Features)
			}
			checkStacks(t, f, c.stack)
		})
	}
}

// checkAgainstScript compares a file's records with perf script's
// output of it.
func checkAgainstScript(t *testing.T, f *File, script string, callchains bool) {
	t.Helper()
	want, wantCounts, err := parseScript(script)
	if err != nil {
		t.Fatal(err)
	}
	got, counts := readerLines(t, f, callchains)
	compareLines(t, f.Path, got, want)
	if fmt.Sprint(counts) != fmt.Sprint(wantCounts) || len(counts) < 2 {
		t.Errorf("samples per event %v, perf script %v", counts, wantCounts)
	}
}

// checkBuildIDs compares the build-ids with perf buildid-list's output,
// but for the modules it lists without one.
func checkBuildIDs(t *testing.T, f *File, list string) {
	t.Helper()
	var got, want []string
	for p, id := range f.Features.BuildIDs {
		got = append(got, fmt.Sprintf("%x %s", id, p))
	}
	for _, l := range strings.Split(list, "\n") {
		if id, _, ok := strings.Cut(l, " "); ok && id != "" {
			want = append(want, l)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("build-ids\n got  %q\n want %q", got, want)
	}
}

// checkStacks checks that in dwarf mode every user-mode sample has its
// registers and a stack copy of the size asked for.
func checkStacks(t *testing.T, f *File, size uint64) {
	t.Helper()
	if size == 0 {
		return
	}
	users := 0
	f.Records(func(r Record) error {
		if s, ok := r.(*Sample); ok && s.CPUMode() == MiscUser {
			users++
			if s.StackSize != size || len(s.Stack) == 0 || s.RegsABI != 2 || len(s.Regs) != s.Event.Attr.NumRegsUser() {
				t.Errorf("user sample with stack %d/%d, regs %d %v", len(s.Stack), s.StackSize, s.RegsABI, s.Regs)
			}
		}
		return nil
	})
	if users == 0 {
		t.Error("no user-mode samples")
	}
}

// updateGolden rewrites a committed file's perf script and perf
// buildid-list outputs.
func updateGolden(t *testing.T, path string, callchains bool) {
	base := strings.TrimSuffix(path, ".data")
	script, err := scriptOf(path, callchains)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".script", []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runPerf("buildid-list", "-i", path)
	if err != nil {
		t.Fatal(err)
	}
	ids := ""
	for _, l := range strings.Split(out, "\n") {
		if id, _, ok := strings.Cut(l, " "); ok && id != "" {
			ids += l + "\n" // not the modules perf lists without a build-id
		}
	}
	if ids == "" {
		os.Remove(base + ".buildids")
		return
	}
	if err := os.WriteFile(base+".buildids", []byte(ids), 0o644); err != nil {
		t.Fatal(err)
	}
}

// openAgainstScript opens the perf.data file at path, closed when t ends,
// and checks what it decodes against perf script's output of it.
func openAgainstScript(t *testing.T, path, script string, callchains bool) *File {
	t.Helper()
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	checkAgainstScript(t, f, script, callchains)
	return f
}
