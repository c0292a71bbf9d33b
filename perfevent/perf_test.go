package perfevent

import (
	"bloop/internal/testenv"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The program the live tests record: committed, so that the build-ids
// and mappings are those of a known binary. Arguments: rounds, threads,
// recursion depth (see testdata/prof/README.md).
var liveProgram = []string{"../testdata/prof/bin/unwind-gcc12-O2", "20", "1", "40"}

// liveModes are the ways perf record is run: the call graph options
// and whether it writes a stream (-o -).
var liveModes = []struct {
	name       string
	args       []string
	pipe       bool
	callchains bool
}{
	{"plain", nil, false, false},
	{"fp", []string{"-g"}, false, true},
	{"dwarf", []string{"--call-graph", "dwarf,4096"}, false, false},
	{"pipe", nil, true, false},
	{"pipe-fp", []string{"-g"}, true, true},
	{"zstd", []string{"-z"}, false, false},
}

// TestLivePerf records the program with the perf installed here in each
// mode, with two events, and compares what Records reads with perf
// script's output of the same file. It is skipped without perf or
// without permission to use perf_event_open.
func TestLivePerf(t *testing.T) {
	testenv.Need(t, "perf")
	dir := t.TempDir()
	events := liveEvents(t, dir)
	for _, m := range liveModes {
		t.Run(m.name, func(t *testing.T) {
			path := filepath.Join(dir, m.name+".data")
			if err := perfRecord(path, events, m.args, m.pipe); err != nil {
				t.Fatal(err)
			}
			script, err := scriptOf(path, m.callchains)
			if err != nil {
				t.Fatal(err)
			}
			f := openAgainstScript(t, path, script, m.callchains)
			if f.Pipe != m.pipe {
				t.Errorf("pipe mode %v, want %v", f.Pipe, m.pipe)
			}
			names := []string{}
			for _, e := range f.Events {
				names = append(names, e.Name)
			}
			if strings.Join(names, ",") != events {
				t.Errorf("events %v, recorded %s", names, events)
			}
			ids, err := runPerf("buildid-list", "-i", path)
			if err != nil {
				t.Fatal(err)
			}
			checkBuildIDs(t, f, ids)
		})
	}
}

// liveEvents picks the events to record: a hardware one if this machine
// counts instructions, else two software ones. It skips the test when
// perf cannot record at all.
func liveEvents(t *testing.T, dir string) string {
	probe := filepath.Join(dir, "probe.data")
	for _, events := range []string{"cpu-clock,instructions", "task-clock,page-faults"} {
		err := perfRecord(probe, events, nil, false)
		if err == nil {
			os.Remove(probe)
			return events
		}
		t.Logf("perf record -e %s: %v", events, err)
	}
	testenv.Capable(t, "perf record", errors.New("records no event here"))

	return ""
}

// perfRecord records the program into path.
func perfRecord(path, events string, args []string, pipe bool) error {
	out := path
	if pipe {
		out = "-"
	}
	argv := append([]string{"record", "-q", "-o", out, "-e", events, "-F", "300"}, args...)
	argv = append(append(argv, "--"), liveProgram...)
	cmd := exec.Command("perf", argv...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if pipe {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		cmd.Stdout = f
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("perf %s: %v: %s", strings.Join(argv, " "), err, stderr.String())
	}
	return nil
}
