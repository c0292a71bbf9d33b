package inputs

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// tree builds a directory of ELF files (copies of a corpus binary), other
// files and links, and returns its root.
func tree(t *testing.T) string {
	t.Helper()
	elf, err := os.ReadFile("../testdata/bin/loops-gcc12-O2")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	write := func(rel string, b []byte) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("bin/prog", elf)
	write("bin/prog.sh", []byte("#!/bin/sh\n"))
	write("lib/libx.so.1.2", append(append([]byte(nil), elf...), 1)) // another file
	write("lib/sub/liby.so", append(append([]byte(nil), elf...), 2))
	write("lib/README", []byte("not ELF"))
	write("lib/empty", nil)
	must(t, os.Symlink("libx.so.1.2", filepath.Join(root, "lib/libx.so.1")))     // sorts first, but a link
	must(t, os.Symlink("../bin", filepath.Join(root, "lib/bindir")))             // a directory: not followed
	must(t, os.Symlink("missing", filepath.Join(root, "lib/dangling")))          // ignored
	must(t, os.Link(filepath.Join(root, "bin/prog"), filepath.Join(root, "zz"))) // hard link: same file
	return root
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func rels(ins []Input) []string {
	var out []string
	for _, in := range ins {
		out = append(out, in.Rel)
	}
	return out
}

func TestCollect(t *testing.T) {
	root := tree(t)
	s := Collect([]string{root})
	want := []string{"bin/prog", "lib/libx.so.1.2", "lib/sub/liby.so"}
	if got := rels(s.Inputs); !reflect.DeepEqual(got, want) {
		t.Errorf("inputs %v, want %v", got, want)
	}
	// README, empty and prog.sh are not ELF; libx.so.1 and zz are other
	// paths of files already listed.
	if s.Ignored != 3 || s.Duplicates != 2 {
		t.Errorf("ignored %d, duplicates %d; want 3 and 2", s.Ignored, s.Duplicates)
	}
	for _, in := range s.Inputs {
		if in.Size == 0 || in.Kind != Binary || in.Path != filepath.Join(root, in.Rel) {
			t.Errorf("%+v", in)
		}
	}
	// A file operand is an input whatever it holds; a file given twice,
	// or also found below a directory operand, is listed once.
	missing := filepath.Join(root, "missing")
	s = Collect([]string{filepath.Join(root, "lib/README"), missing, filepath.Join(root, "bin"), filepath.Join(root, "zz")})
	if got, want := rels(s.Inputs), []string{"README", "missing", "prog"}; !reflect.DeepEqual(got, want) {
		t.Errorf("inputs %v, want %v", got, want)
	}
	if s.Inputs[2].Rel != "prog" || s.Duplicates != 1 {
		t.Errorf("the hard link given as an operand is not folded into bin/prog: %+v, %d duplicates", s.Inputs, s.Duplicates)
	}
}

func TestMeasurementDir(t *testing.T) {
	root := tree(t)
	m := filepath.Join(root, "m")
	must(t, os.MkdirAll(m, 0o755))
	must(t, os.WriteFile(filepath.Join(m, "a-000.hpcrun"), []byte("HPCRUN"), 0o644))
	empty := t.TempDir()
	s := Collect([]string{m, filepath.Join(root, "bin"), empty})
	if len(s.Inputs) != 2 || s.Inputs[0].Kind != Measurements || s.Inputs[1].Kind != Binary {
		t.Errorf("%+v", s.Inputs)
	}
	if !reflect.DeepEqual(s.Empty, []string{empty}) {
		t.Errorf("empty operands %q, want %q", s.Empty, empty)
	}
}

func TestReadList(t *testing.T) {
	got, err := ReadList(strings.NewReader("a\n\nb c\r\n  \n/d/e\n"))
	if err != nil || !reflect.DeepEqual(got, []string{"a", "b c", "/d/e"}) {
		t.Errorf("%q %v", got, err)
	}
}

func TestOutputNames(t *testing.T) {
	ins := []Input{
		{Path: "/a/lib/x.so", Rel: "lib/x.so"},
		{Path: "/b/lib/x.so", Rel: "lib/x.so"},
		{Path: "/c/prog", Rel: "prog"},
		{Path: "/m", Rel: "m", Kind: Measurements},
	}
	got := OutputNames(ins, ".hpcstruct")
	if got[2] != "prog.hpcstruct" || got[3] != "" {
		t.Errorf("%q", got)
	}
	if got[0] == got[1] || !strings.HasPrefix(got[0], "lib/x.so@") || !strings.HasSuffix(got[1], ".hpcstruct") {
		t.Errorf("colliding names not told apart: %q", got)
	}
	// The same run names the same: a rerun finds its own files.
	if again := OutputNames(ins, ".hpcstruct"); !reflect.DeepEqual(again, got) {
		t.Errorf("unstable names %q then %q", got, again)
	}
}
