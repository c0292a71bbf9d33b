package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"bloop/diff"
)

// buildTree writes, under dir, the structure of each corpus binary with
// bloop struct: files maps a relative path to the binary and the format
// ("xml" or "json").
func buildTree(t *testing.T, dir string, files map[string][2]string) {
	t.Helper()
	for rel, bf := range files {
		in := filepath.Join("../../testdata/bin", bf[0])
		if _, err := os.Stat(in); err != nil {
			t.Fatalf("corpus binary %s missing", in)
		}
		out := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		if code := runStruct([]string{"--format", bf[1], "-o", out, in}); code != 0 {
			t.Fatalf("struct --format %s %s: exit %d", bf[1], in, code)
		}
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// copyTree copies the regular files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDiffDirs: bloop diff DIR DIR on the structure files bloop struct
// writes for the gcc 12 and clang 14 -O2 builds of corpus programs, in
// nested directories, with files only on one side, files that are not
// structure files, a malformed file, and the XML and the JSON forms of one
// build (equal).
func TestDiffDirs(t *testing.T) {
	tmp := t.TempDir()
	gcc, clang := filepath.Join(tmp, "gcc"), filepath.Join(tmp, "clang")
	buildTree(t, gcc, map[string][2]string{
		"bin/loops.hpcstruct":        {"loops-gcc12-O2", "xml"},
		"lib/libinline.so.hpcstruct": {"libinline-gcc12-O2.so", "xml"},
		"bin/sub/irred.json":         {"irred-gcc12-O2", "json"},
		"bin/old/hot.hpcstruct":      {"hot-gcc12-O2", "xml"},
	})
	buildTree(t, clang, map[string][2]string{
		"bin/loops.hpcstruct":        {"loops-clang14-O2", "xml"},
		"lib/libinline.so.hpcstruct": {"libinline-clang14-O2.so", "xml"},
		"bin/sub/irred.json":         {"irred-clang14-O2", "json"},
		"bin/new/switch.json":        {"switch-clang14-O2", "json"},
	})
	writeFiles(t, clang, map[string]string{
		"README":         "a build tree\n",
		"manifest.jsonl": `{"version":1,"path":"bin/loops","outcome":"written"}` + "\n",
	})
	// The gcc build again with every file in the other form, under the
	// same names.
	gccOther := filepath.Join(tmp, "gcc-other")
	buildTree(t, gccOther, map[string][2]string{
		"bin/loops.hpcstruct":        {"loops-gcc12-O2", "json"},
		"lib/libinline.so.hpcstruct": {"libinline-gcc12-O2.so", "json"},
		"bin/sub/irred.json":         {"irred-gcc12-O2", "xml"},
		"bin/old/hot.hpcstruct":      {"hot-gcc12-O2", "json"},
	})
	// The clang build with one file cut short.
	broken := filepath.Join(tmp, "broken")
	copyTree(t, clang, broken)
	loops := filepath.Join(broken, "bin", "loops.hpcstruct")
	data, err := os.ReadFile(loops)
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.Index(data, []byte("<L "))
	if err := os.WriteFile(loops, data[:cut+10], 0o644); err != nil {
		t.Fatal(err)
	}
	cutLine := 1 + bytes.Count(data[:cut], []byte("\n"))
	file := filepath.Join(tmp, "file.hpcstruct")
	os.WriteFile(file, data, 0o644)

	cases := []struct {
		name   string
		args   []string
		code   int
		lines  []string // stdout lines, in order, by prefix ("" = blank)
		stderr string   // prefix of the one stderr line; "" = none
	}{
		{
			name: "gcc-vs-clang",
			args: []string{gcc, clang},
			code: 1,
			lines: []string{"--- a: " + gcc, "+++ b: " + clang,
				"bin/loops.hpcstruct: 2 procedures changed, 1 loop removed, 1 line out of loops",
				"only in b: bin/new/switch.json",
				"only in a: bin/old/hot.hpcstruct",
				"bin/sub/irred.json: 3 procedures changed, 2 loops split, 1 line out of loops",
				"lib/libinline.so.hpcstruct: ",
				"",
				"totals: 3 pairs compared, 3 differ, 1 only in a, 1 only in b, 0 errors, 2 other files ignored; 7 procedures differ: 0 added, 0 removed; loops +0 -3 moved 0 split 3 fused 0;"},
		},
		{
			name:  "identical",
			args:  []string{gcc, gcc},
			lines: []string{"--- a: ", "+++ b: ", "", "totals: 4 pairs compared, 0 differ, 0 only in a, 0 only in b, 0 errors, 0 other files ignored; 0 procedures differ"},
		},
		{
			name:  "xml-vs-json",
			args:  []string{"--addresses", gcc, gccOther},
			lines: []string{"--- a: ", "+++ b: ", "", "totals: 4 pairs compared, 0 differ, 0 only in a, 0 only in b, 0 errors, 0 other files ignored; 0 procedures differ"},
		},
		{
			name: "malformed",
			args: []string{gcc, broken},
			code: 2,
			lines: []string{"--- a: ", "+++ b: ",
				"only in b: bin/new/switch.json",
				"only in a: bin/old/hot.hpcstruct",
				"bin/sub/irred.json: ",
				"lib/libinline.so.hpcstruct: ",
				"",
				"totals: 2 pairs compared, 2 differ, 1 only in a, 1 only in b, 1 error, 2 other files ignored;"},
			stderr: "bloop diff: " + loops + ":" + strconv.Itoa(cutLine) + ": truncated XML",
		},
		{name: "dir-and-file", args: []string{gcc, file}, code: 2,
			stderr: "bloop diff: " + gcc + " is a directory and " + file + " is not: give two structure files or two directories"},
		{name: "file-and-dir", args: []string{"--json", file, gcc}, code: 2,
			stderr: "bloop diff: " + gcc + " is a directory and " + file + " is not"},
		{name: "missing-dir", args: []string{gcc, filepath.Join(tmp, "missing")}, code: 2,
			stderr: "bloop diff: stat " + filepath.Join(tmp, "missing") + ": no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := diffCaptured(t, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr %q", code, c.code, errOut)
			}
			if c.stderr == "" && errOut != "" || c.stderr != "" && (!strings.HasPrefix(errOut, c.stderr) || strings.Count(errOut, "\n") != 1) {
				t.Errorf("stderr %q, want one line starting %q", errOut, c.stderr)
			}
			var lines []string
			if out != "" {
				lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			}
			if len(lines) != len(c.lines) {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), len(c.lines), out)
			}
			for i, p := range c.lines {
				if !strings.HasPrefix(lines[i], p) || p == "" && lines[i] != "" {
					t.Errorf("line %d: %q, want it to start with %q", i+1, lines[i], p)
				}
			}
		})
	}

	// --json: one document; every pair's report is what bloop diff --json
	// writes for its two files, with --addresses too; -j 1 gives the same.
	for _, flags := range [][]string{{"--json"}, {"--json", "--addresses"}} {
		code, out, errOut := diffCaptured(t, append(flags, gcc, clang)...)
		if code != 1 || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", flags, code, errOut)
		}
		_, out1, _ := diffCaptured(t, append(flags, "-j", "1", gcc, clang)...)
		if out1 != out {
			t.Errorf("%v: -j 1 gives another report", flags)
		}
		var r struct {
			Version int
			A, B    string
			Options struct{ Addresses bool }
			Totals  map[string]int
			Pairs   []struct {
				Path   string
				Equal  bool
				Report json.RawMessage
			}
			OnlyInA []string `json:"only_in_a"`
			OnlyInB []string `json:"only_in_b"`
			Errors  []diff.FileError
			Ignored []string
		}
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil || dec.More() {
			t.Fatalf("%v: not one JSON document (%v):\n%s", flags, err, out)
		}
		if r.Version != diff.ReportVersion || r.A != gcc || r.B != clang || len(r.Pairs) != 3 || r.Totals["pairs_differ"] != 3 ||
			strings.Join(r.OnlyInA, ",") != "bin/old/hot.hpcstruct" || strings.Join(r.OnlyInB, ",") != "bin/new/switch.json" ||
			len(r.Errors) != 0 || len(r.Ignored) != 2 || r.Options.Addresses != (len(flags) == 2) || r.Totals["loops_removed"] != 3 || r.Totals["only_in_a"] != 1 {
			t.Errorf("%v: report %+v", flags, r)
		}
		for _, p := range r.Pairs {
			_, single, _ := diffCaptured(t, append(flags, filepath.Join(gcc, p.Path), filepath.Join(clang, p.Path))...)
			var x, y any
			json.Unmarshal([]byte(single), &x)
			json.Unmarshal(p.Report, &y)
			xs, _ := json.Marshal(x)
			ys, _ := json.Marshal(y)
			if !bytes.Equal(xs, ys) || x == nil || p.Equal {
				t.Errorf("%v %s: pair report differs from bloop diff of the two files:\n%s\nwant:\n%s", flags, p.Path, ys, xs)
			}
		}
	}
	// --json with an error: the document still comes, with the error.
	code, out, errOut := diffCaptured(t, "--json", gcc, broken)
	var r diff.DirReport
	if code != 2 || json.Unmarshal([]byte(out), &r) != nil || len(r.Errors) != 1 || !strings.HasPrefix(errOut, "bloop diff: "+loops+":") ||
		r.Errors[0].Path != "bin/loops.hpcstruct" || r.Errors[0].Message != strings.TrimPrefix(strings.TrimSpace(errOut), "bloop diff: ") {
		t.Errorf("--json with a malformed file: exit %d, errors %+v, stderr %q", code, r.Errors, errOut)
	}
}
