package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/schematest"
	"bloop/schema"
)

// TestStructJSONSchema: bloop struct --format json follows
// schema/structure-v1.json in every placement mode, not only the default
// one the corpus goldens hold (schema's tests validate those).
func TestStructJSONSchema(t *testing.T) {
	bins := []string{"loops-gcc12-O2", "stl-clang14-O3", "inline-gcc12-O2g1", "switch-gcc12-O2nodebug", "libinline-gcc12-O2.so"}
	modes := [][]string{
		nil,
		{"--inline", "heuristic"},
		{"--inline", "heuristic", "-N", "none"},
		{"--inline", "dwarf", "-N", "all"},
		{"--compat", "hpcstruct"},
	}
	dir := t.TempDir()
	roles := map[string]bool{}
	for _, b := range bins {
		in := filepath.Join("../../testdata/bin", b)
		if _, err := os.Stat(in); err != nil {
			t.Fatalf("corpus binary %s missing", in)
		}
		for _, m := range modes {
			out := filepath.Join(dir, b+".json")
			args := append(append([]string{"--format", "json", "-q", "-o", out}, m...), in)
			if code := runStruct(args); code != 0 {
				t.Fatalf("struct %v: exit %d", args, code)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if err := schematest.ValidateJSON(schema.Structure, data); err != nil {
				t.Errorf("struct %v: %v", args[4:], err)
			}
			for _, r := range []string{"call", "callee", "guard", "alien"} {
				if strings.Contains(string(data), `"inline": "`+r+`"`) {
					roles[r] = true
				}
			}
		}
	}
	// Every kind of alien was written and checked.
	for _, r := range []string{"call", "callee", "guard", "alien"} {
		if !roles[r] {
			t.Errorf("no alien with inline %q in the outputs checked", r)
		}
	}
}

// TestDiffJSONSchema: bloop diff --json follows schema/diff-v1.json, for
// two files (equal, different, with --addresses) and for two directories
// (with a file only on one side and a malformed file).
func TestDiffJSONSchema(t *testing.T) {
	tmp := t.TempDir()
	a, b := filepath.Join(tmp, "a"), filepath.Join(tmp, "b")
	buildTree(t, a, map[string][2]string{
		"loops.hpcstruct":      {"loops-gcc12-O2", "xml"},
		"sub/inline.json":      {"inline-gcc12-O2", "json"},
		"only-a/hot.hpcstruct": {"hot-gcc12-O2", "xml"},
		"bad/irred.hpcstruct":  {"irred-gcc12-O2", "xml"},
	})
	buildTree(t, b, map[string][2]string{
		"loops.hpcstruct":     {"loops-clang14-O2", "xml"},
		"sub/inline.json":     {"inline-gcc12-O3", "json"},
		"bad/irred.hpcstruct": {"irred-clang14-O2", "xml"},
	})
	bad := filepath.Join(b, "bad", "irred.hpcstruct")
	data, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(bad, data[:len(data)/2], 0o644)
	runs := [][]string{
		{"--json", filepath.Join(a, "loops.hpcstruct"), filepath.Join(b, "loops.hpcstruct")},
		{"--json", "--addresses", filepath.Join(a, "sub/inline.json"), filepath.Join(b, "sub/inline.json")},
		{"--json", filepath.Join(a, "loops.hpcstruct"), filepath.Join(a, "loops.hpcstruct")},
		{"--json", a, b},
		{"--json", "--addresses", a, b},
		{"--json", a, a},
	}
	for _, args := range runs {
		code, out, errOut := diffCaptured(t, args...)
		if code == 2 && !strings.Contains(errOut, "irred.hpcstruct") || out == "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		if err := schematest.ValidateJSON(schema.Diff, []byte(out)); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
}
