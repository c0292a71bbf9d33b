package view

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"bloop/structfile"
)

// writeStruct analyses bin as bloop struct --format html does (its
// sources found through -R, system headers left out: whether they exist
// varies) and returns the page and its writer.
func writeStruct(t *testing.T, bin string, so StructOptions) (string, *StructWriter, error) {
	t.Helper()
	var sw *StructWriter
	opt := structfile.Options{
		ModulePath: filepath.Base(bin), // not the checkout's absolute path
		Replace:    []structfile.Replacement{{Old: "/src", New: "../testdata/src"}, {Old: "/usr/include", New: "/nonexistent"}},
		Writer: func(w io.Writer) structfile.Writer {
			sw = NewStructWriter(w, so)
			return sw
		},
	}
	var buf bytes.Buffer
	if _, err := structfile.Write(bin, opt, &buf); err != nil {
		return "", sw, err
	}
	path := filepath.Join(t.TempDir(), filepath.Base(bin)+".html")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, sw, nil
}

// TestStructDataGolden: the structure page's data for loops-gcc12-O2
// (nested loops, inlined atoi, the source through -R).
func TestStructDataGolden(t *testing.T) {
	_, sw, err := writeStruct(t, "../testdata/bin/loops-gcc12-O2", StructOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := jsonIndent(sw.d)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "loops-struct.json", b)
}

// TestStructLimits: --proc keeps the procedures it matches; a tree over
// the bound is refused with a message that says what to do, and no page.
func TestStructLimits(t *testing.T) {
	_, sw, err := writeStruct(t, "../testdata/bin/loops-gcc12-O2", StructOptions{Proc: regexp.MustCompile("^mat")})
	if err != nil {
		t.Fatal(err)
	}
	if c := sw.d.Counts; c.Procs != 1 || c.Files != 1 || c.Loops != 3 {
		t.Errorf("--proc ^mat: counts %+v, want matmul alone with its 3 loops", c)
	}
	_, _, err = writeStruct(t, "../testdata/bin/loops-gcc12-O2", StructOptions{MaxScopes: 20})
	var big *ErrTooLarge
	if !errors.As(err, &big) || !strings.Contains(err.Error(), "--proc") {
		t.Errorf("a tree over the bound: %v", err)
	}
}
