package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// captured runs a command with stdout and stderr going to files and
// returns its exit status and what it printed.
func captured(t *testing.T, run func([]string) int, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	errf, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	saveOut, saveErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = out, errf
	func() {
		defer func() { os.Stdout, os.Stderr = saveOut, saveErr }()
		code = run(args)
	}()
	out.Close()
	errf.Close()
	o, _ := os.ReadFile(out.Name())
	e, _ := os.ReadFile(errf.Name())
	return code, string(o), string(e)
}

// TestHelpEveryCommand: -h, --help and bloop help CMD print the usage on
// stdout and exit 0, for every command.
func TestHelpEveryCommand(t *testing.T) {
	for _, c := range commands {
		var forms [][]string
		if c.name != "help" {
			forms = [][]string{{c.name, "-h"}, {c.name, "--help"}, {"help", c.name}}
		} else {
			forms = [][]string{{"help"}, {"help", "help"}}
		}
		for _, args := range forms {
			code, out, errOut := captured(t, dispatch, args...)
			if code != 0 || errOut != "" || !strings.Contains(out, "usage: bloop") {
				t.Errorf("bloop %q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
			}
		}
	}
	for _, args := range [][]string{{"-h"}, {"--help"}} {
		code, out, _ := captured(t, dispatch, args...)
		if code != 0 || !strings.Contains(out, "commands:") {
			t.Errorf("bloop %q: exit %d, stdout %q", args, code, out)
		}
	}
}

// TestUnknownFlag: a bad flag is one line that names it and points at -h.
func TestUnknownFlag(t *testing.T) {
	for _, c := range commands {
		if c.name == "help" {
			continue
		}
		code, out, errOut := captured(t, dispatch, c.name, "--no-such-flag")
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		want := "see bloop " + c.name + " -h"
		if code != 2 || out != "" || len(lines) != 1 || !strings.Contains(errOut, "-no-such-flag") || !strings.Contains(errOut, want) {
			t.Errorf("bloop %s --no-such-flag: exit %d, stdout %q, stderr %q; want exit 2 and one line naming the flag and %q", c.name, code, out, errOut, want)
		}
	}
	code, _, errOut := captured(t, dispatch, "frobnicate")
	if code != 2 || strings.Count(errOut, "\n") != 1 {
		t.Errorf("unknown command: exit %d, stderr %q", code, errOut)
	}
}

// TestVersion: bloop version, --version, -V and struct -V/--version print
// one line naming bloop and the Go version it was built with.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-V"}, {"struct", "-V"}, {"struct", "--version"}} {
		code, out, _ := captured(t, dispatch, args...)
		if code != 0 || !strings.HasPrefix(out, "bloop ") || !strings.Contains(out, "go1.") || strings.Count(out, "\n") != 1 {
			t.Errorf("bloop %q: exit %d, stdout %q", args, code, out)
		}
	}
}

// TestFlagsAfterOperand: hpcstruct users put -o after the binary, and
// -o - writes to stdout.
func TestFlagsAfterOperand(t *testing.T) {
	if _, err := os.Stat(example); err != nil {
		t.Fatal("testdata binary missing")
	}
	code, out, errOut := captured(t, runStruct, "--nocache", example, "-o", "-")
	if code != 0 || !strings.HasPrefix(out, "<?xml") || !strings.Contains(out, "</HPCToolkitStructure>") {
		t.Fatalf("struct BIN -o -: exit %d, stderr %q, stdout starts %.40q", code, errOut, out)
	}
	dest := filepath.Join(t.TempDir(), "x.hpcstruct")
	// hpcstruct's long spellings, -j4 and --output=FILE.
	code, _, errOut = captured(t, runStruct, example, "--jobs", "2", "-j1", "--output="+dest, "--pretty-print", "--nocache")
	got, _ := os.ReadFile(dest)
	if code != 0 || !strings.Contains(string(got), "\n  <LM") && !strings.Contains(string(got), "\n<LM") {
		t.Fatalf("long flags after the binary: exit %d, stderr %q", code, errOut)
	}
	// "--" ends the flags: what follows is an operand even if it starts
	// with "-".
	code, _, errOut = captured(t, runStruct, "--nocache", "-o", dest, "--", "-o")
	if code != 1 || !strings.Contains(errOut, "-o: cannot read") {
		t.Errorf("struct -- -o: exit %d, stderr %q; want the file -o to be read", code, errOut)
	}
	// One binary given twice is a batch of one input.
	outDir := t.TempDir()
	code, _, errOut = captured(t, runStruct, "-q", "--nocache", "-o", outDir, example, example)
	if ents, _ := os.ReadDir(outDir); code != 0 || len(ents) != 1 || ents[0].Name() != "loops-gcc12-O2.hpcstruct" {
		t.Errorf("one binary twice: exit %d, stderr %q, wrote %v", code, errOut, ents)
	}
}

// TestReplacePathAndInclude: -R rewrites source paths in the output;
// -I dir/* finds the sources anywhere under dir, as -I with the exact
// directory does.
func TestReplacePathAndInclude(t *testing.T) {
	bin := "../../testdata/bin/loops-gcc12-O2"
	if _, err := os.Stat(bin); err != nil {
		t.Fatal("testdata binary missing")
	}
	dir := t.TempDir()
	out := func(args ...string) string {
		t.Helper()
		dest := filepath.Join(dir, "out")
		if code := runStruct(append([]string{"-q", "--nocache", "-o", dest}, append(args, bin)...)); code != 0 {
			t.Fatalf("struct %v: exit %d", args, code)
		}
		b, _ := os.ReadFile(dest)
		return string(b)
	}
	plain := out()
	moved := out("-R", "/src=/home/me/project")
	if !strings.Contains(plain, `n="/src/loops.c"`) || strings.Contains(moved, `"/src/`) || !strings.Contains(moved, `n="/home/me/project/loops.c"`) {
		t.Errorf("-R /src=/home/me/project did not move every source path")
	}
	if strings.ReplaceAll(plain, `"/src/`, `"/home/me/project/`) != moved {
		t.Errorf("-R changed more than the source paths")
	}
	// The sources, deep in a tree of their own.
	deep := filepath.Join(dir, "tree", "a", "b")
	os.MkdirAll(deep, 0o755)
	src, err := os.ReadFile("../../testdata/src/loops.c")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(deep, "loops.c"), src, 0o644)
	exact := out("-I", "../../testdata/src")
	recursive := out("--include", filepath.Join(dir, "tree")+"/*")
	if exact == plain {
		t.Errorf("-I with the sources changed nothing: the test binary no longer shows the hybrid mode")
	}
	if recursive != exact {
		t.Errorf("-I DIR/* and -I with the exact directory give different output")
	}
	for _, bad := range []string{"noequals", "a=b=c", "=x"} {
		if code, _, errOut := captured(t, runStruct, "-R", bad, bin); code != 2 || !strings.Contains(errOut, "replace-path") {
			t.Errorf("-R %q: exit %d, stderr %q", bad, code, errOut)
		}
	}
}
