package main

import (
	"bloop/internal/testenv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// structStderr runs bloop struct with args and returns its exit code,
// stderr and the structure file written to out.
func structStderr(t *testing.T, args []string, out string) (int, string, string) {
	t.Helper()
	errFile, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer func(f *os.File) { os.Stderr = f }(os.Stderr)
	os.Stderr = errFile
	code := runStruct(append(args, "-o", out))
	os.Stderr.Close()
	msg, _ := os.ReadFile(errFile.Name())
	xml, _ := os.ReadFile(out)
	return code, string(msg), string(xml)
}

// TestStructCubin: a cubin gives a structure file. Without --gpucfg
// hpcstruct finds no loops in cubins either, so compat mode has none and
// no warning; with --gpucfg (or hpcstruct's --gpucfg yes) and in the
// default mode the kernels have their loops and call sites are analysed
// (has-calls="1"). The cache keeps the two compat modes' files apart:
// each run asks it after the one before.
func TestStructCubin(t *testing.T) {
	bin := "../../../shared/hpctoolkit-tests/bin/inlines+loops-sm_62-nvcc102-0"
	testenv.Shared(t, bin)
	for _, tc := range []struct {
		args  []string
		loops int
	}{
		{[]string{"--compat", "hpcstruct"}, 0},
		{[]string{"--compat", "hpcstruct", "--gpucfg", "yes"}, 11},
		{[]string{"--compat", "hpcstruct", "--gpucfg", "no"}, 0},
		{[]string{bin, "--compat", "hpcstruct", "--gpucfg"}, 11},
		{nil, 11},
	} {
		args := tc.args
		if len(args) == 0 || args[0] != bin {
			args = append(args, bin)
		}
		out := filepath.Join(t.TempDir(), "cubin.hpcstruct")
		code, msg, xml := structStderr(t, args, out)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, msg)
		}
		if msg != "" {
			t.Errorf("%q: stderr: %s", args, msg)
		}
		if !strings.Contains(xml, `<P i="4" n="f2()" ln="_Z2f2v" l="9" v="{[0x12ee0-0x12ee1)}">`) {
			t.Errorf("%q: no f2() at 0x12ee0, where hpcstruct lays it out:\n%s", args, xml)
		}
		calls := `has-calls="0"`
		if tc.loops > 0 {
			calls = `has-calls="1"`
		}
		if n := strings.Count(xml, "<L "); n != tc.loops || !strings.Contains(xml, calls) {
			t.Errorf("%q: %d loops, want %d, and %s", args, n, tc.loops, calls)
		}
	}
}

// TestStructCubinUndecoded: a cubin of a generation bloop does not decode
// (its e_flags made sm_77) keeps today's output, with the warning every
// architecture without control-flow analysis gives, except in compat mode
// without --gpucfg, where hpcstruct analyses no cubin's control flow.
func TestStructCubinUndecoded(t *testing.T) {
	b, err := os.ReadFile(testenv.Shared(t, "../../../shared/hpctoolkit-cuda/bin/inlines+loops-sm_75-nvcc112-r"))
	if err != nil {
		t.Fatal(err)
	}

	b[48] = 77 // e_flags' SM number
	bin := filepath.Join(t.TempDir(), "sm77.cubin")
	if err := os.WriteFile(bin, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		warn bool
	}{
		{[]string{bin}, true},
		{[]string{"--compat", "hpcstruct", bin}, false},
		{[]string{"--compat", "hpcstruct", "--gpucfg", "yes", bin}, true},
	} {
		code, msg, xml := structStderr(t, tc.args, filepath.Join(t.TempDir(), "out.hpcstruct"))
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", tc.args, code, msg)
		}
		warned := strings.Contains(msg, "cuda sm_77 has no control-flow analysis yet")
		if warned != tc.warn || !tc.warn && msg != "" {
			t.Errorf("%q: stderr %q, want the warning: %v", tc.args, msg, tc.warn)
		}
		if strings.Contains(xml, "<L ") || !strings.Contains(xml, `has-calls="0"`) || !strings.Contains(xml, "<S ") {
			t.Errorf("%q: loops or call sites, or no statements:\n%s", tc.args, xml)
		}
	}
}
