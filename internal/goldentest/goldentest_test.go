package goldentest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFirstDiff(t *testing.T) {
	for _, c := range []struct{ got, want, say string }{
		{"a\nb\n", "a\nc\n", "line 2:\n\tgot:  b\n\twant: c"},
		{"a\n", "a\nb\n", "line 2:\n\tgot:  \n\twant: b"},
		{"a", "a\nb", "line 2: output ends; golden has\n\tb"},
		{"a\nb", "a", "line 2: golden ends; output has\n\tb"},
		{"same", "same", "nowhere"},
	} {
		if s := FirstDiff([]byte(c.got), []byte(c.want)); s != c.say {
			t.Errorf("FirstDiff(%q, %q) = %q, want %q", c.got, c.want, s, c.say)
		}
	}
}

// recorder notes what Check reports instead of failing the test.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Errorf(f string, args ...any) { r.errs = append(r.errs, f) }

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	r := &recorder{TB: t}
	Check(r, path, []byte("one\n"), false)
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "-update writes it") {
		t.Errorf("missing golden: %q", r.errs)
	}
	Check(t, path, []byte("one\n"), true)
	if b, err := os.ReadFile(path); err != nil || string(b) != "one\n" {
		t.Fatalf("update wrote %q, %v", b, err)
	}
	r = &recorder{TB: t}
	Check(r, path, []byte("one\n"), false)
	Check(r, path, []byte("two\n"), false)
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "differs") {
		t.Errorf("errors %q, want one difference", r.errs)
	}
}
