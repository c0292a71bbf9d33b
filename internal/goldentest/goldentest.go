// Package goldentest compares a test's output with its golden file, the
// one way for every package that has them: with -update (each package's
// own flag) it rewrites the file, otherwise a difference fails the test
// with the first line that differs.
package goldentest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Check compares got with the golden file at path, or writes it there
// when update is set. A missing golden fails t.
func Check(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%v (go test -update writes it)", err)
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it) at %s", path, FirstDiff(got, want))
	}
}

// FirstDiff says where got and want first differ, by line.
func FirstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < max(len(g), len(w)); i++ {
		gok, wok := i < len(g), i < len(w)
		switch {
		case gok && wok && bytes.Equal(g[i], w[i]):
			continue
		case !gok:
			return fmt.Sprintf("line %d: output ends; golden has\n\t%s", i+1, clip(w[i]))
		case !wok:
			return fmt.Sprintf("line %d: golden ends; output has\n\t%s", i+1, clip(g[i]))
		}
		return fmt.Sprintf("line %d:\n\tgot:  %s\n\twant: %s", i+1, clip(g[i]), clip(w[i]))
	}
	return "nowhere"
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}
