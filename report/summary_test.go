package report

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"bloop/profile"
	"bloop/sample"
)

// TestSummary: the summary of a recording says how the samples unwound,
// why some failed, and which modules could not be read.
func TestSummary(t *testing.T) {
	p := synthetic()
	p.Meta = sample.Meta{Command: []string{"prog", "-n"}, Event: "cpu-clock", Freq: 1000, StackSize: 256}
	p.Lost = 2
	p.Outcomes = [3]uint64{profile.Complete: 8, profile.Truncated: 1, profile.Failed: 2}
	p.FPOutcomes = [3]uint64{profile.Complete: 5, profile.Truncated: 2, profile.Failed: 4}
	p.FPSteps = 3
	p.Reasons = map[string]uint64{"no recipe": 1, "bad return address": 1}
	p.Modules = []*profile.Module{{Path: "/lib/ok.so"}, {Path: "/lib/gone.so", Err: errors.New("no such file")}}
	var buf bytes.Buffer
	Summary(&buf, p)
	want := `command:  prog -n
event:    cpu-clock at 1000 Hz, 256 bytes of stack per sample
samples:  11, lost 2
unwind:   72.73% to the process/thread entry with recipes (8 complete, 1 truncated stack, 2 failed; 3 frames without recipe, by frame pointer or stack scan)
          for comparison, frame pointers alone (as perf's default unwinder) would reach it for 45.45% (5 complete, 2 truncated stack, 4 failed)
`
	got := buf.String()
	// The failure reasons come by count, ties in map order: compare
	// the lines that do not depend on it.
	for _, s := range []string{want, "          failed: no recipe (1)\n", "          failed: bad return address (1)\n", "module:   /lib/gone.so: no such file\n"} {
		if !strings.Contains(got, s) {
			t.Errorf("summary lacks %q:\n%s", s, got)
		}
	}
	if strings.Contains(got, "ok.so") {
		t.Errorf("summary names a module that was read:\n%s", got)
	}
}
