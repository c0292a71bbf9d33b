package profile

import (
	"path/filepath"
	"testing"

	"bloop/internal/rectest"
	"bloop/internal/testenv"
)

// The programs of issue 23's unwinding target, each recorded as a user
// would: an interpreter running a script, and a shell running two of
// them at once. 99.9% of the samples must unwind to their process or
// thread entry (at a few hundred samples, one may not). What is left is
// python's start-up: _PyPathConfig_ComputeSysPath0 has a 64 KB stack
// frame, beyond any stack copy the kernel takes (perf's limit is 65528
// bytes), so a sample in it or its callees is truncated, as is one in
// getpath_realpath's 16 KB frames when the kernel's copy stops at stack
// pages the buffers never touched. That is a count per process, not a
// share of the run: 0 to 3 in 57 runs of both tests under load, no
// sample failed. The runs are long enough that 0.1% is more than that.

// python is Debian's interpreter (not a wrapper script on PATH).
const python = "/usr/bin/python3.11"

func requireUnwound(t *testing.T, rec string, p *Profile, what string) {
	t.Helper()
	if p.Samples != p.Outcomes[Complete] {
		keepRecording(t, rec)
	}
	ok := float64(p.Outcomes[Complete]) / float64(max(p.Samples, 1))
	t.Logf("%s: %d samples, %.2f%% unwound to an entry (%d truncated, %d failed); reasons %v", what, p.Samples, 100*ok,
		p.Outcomes[Truncated], p.Outcomes[Failed], p.Reasons)
	// 99.9%, on a loaded machine too (scripts/unwind-stress.sh runs these
	// tests beside two busy loops). What a loaded machine showed was no
	// load effect but rare samples in procedures whose recipes were wrong
	// (issue 37: a cold part's tail call shifted its callee's frame).
	if bad := p.Samples - p.Outcomes[Complete]; p.Samples < 200 || bad > max(1, p.Samples/1000) {
		t.Errorf("%s: %.2f%% of %d samples unwound to an entry, want 99.9%%", what, 100*ok, p.Samples)
	}
}

func workScript(t *testing.T) string {
	testenv.NeedFile(t, python, "python3.11")
	s, _ := filepath.Abs("../testdata/prof/work.py")
	return s
}

// TestUnwindPython: python3.11 running a JSON and regex script, through
// the interpreter's loop, libpython's C functions and the json and re
// C modules (shared objects dlopen'ed at import).
func TestUnwindPython(t *testing.T) {
	script := workScript(t)
	rec := rectest.Record(t, python, script)
	p, err := Build(rec, Options{Analyze: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	requireUnwound(t, rec, p, "python3.11 work.py")
}

// TestUnwindTwoProcesses: sh runs two interpreters, one in the
// background: forks, execs, and two processes sampled at once. 36,000
// rounds each, about 4,000 samples: at 2,000, 0.1% was two samples, and
// the two start-ups truncated three in 1 of 57 runs.
func TestUnwindTwoProcesses(t *testing.T) {
	script := workScript(t)
	cmd := python + " " + script + " 36000 & " + python + " " + script + " 36000; wait"
	rec := rectest.Record(t, "/bin/sh", "-c", cmd)
	p, err := Build(rec, Options{Analyze: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	requireUnwound(t, rec, p, "sh -c 'python3.11 work.py & python3.11 work.py; wait'")
	pids := map[uint32]bool{}
	for tid := range p.ThreadTrees() {
		pids[tid] = true
	}
	if len(pids) < 2 {
		t.Errorf("samples of %d threads, want both interpreters'", len(pids))
	}
}
