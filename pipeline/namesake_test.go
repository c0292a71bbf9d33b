package pipeline

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"bloop/internal/testenv"
)

// TestCompatNamesakeCallees builds the shape of issue 40's libm row with
// gcc 12 -O2 -g: two files, a.c and b.c, each inline a static function
// deval of their own, four times, so that gcc writes three of the call
// files as DW_FORM_implicit_const, which Dyninst 12.3 does not read (the call sites
// are <unknown>:0 for hpcstruct); a.c's fa ends in a call of a function
// that never returns, but whose body returns for Dyninst (a jump through
// a pointer), so that its parse runs on into b.c's fb, as libm's
// __j0f128_finite's runs on into __j1f128_finite. hpcstruct keys an
// inline node by call-site file, line and callee name (its FLPIndex):
// both files' deval calls are one node in fa, the code of the file that
// does not name the node under an <inline> guard of b.c, and the node's
// line is the first loop line of its own file. Compat mode must write one
// such node (scopes: the inline key without the callee's file, and
// emitInline's line from the callee's own file).
func TestCompatNamesakeCallees(t *testing.T) {
	src := testenv.Fixture(t, "testdata/namesake")
	gcc := testenv.NeedAny(t, "gcc-12", "gcc")
	dir := t.TempDir()
	for _, f := range []string{"a.c", "b.c", "main.c"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := buildIn(t, dir, gcc, []string{"-g", "-O2", "a.c", "b.c"}, "main.c", "namesake")
	// The shape the rule is about: unread call sites in both units.
	dump, err := exec.Command(testenv.NeedAny(t, "llvm-dwarfdump-15", "llvm-dwarfdump"), "-v", "--debug-info", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a.c", "b.c"} {
		if !bytes.Contains(dump, []byte(`DW_AT_call_file [DW_FORM_implicit_const]	("`+filepath.Join(dir, f))) {
			t.Fatalf("%s's call sites are not DW_FORM_implicit_const: the build lacks the shape", f)
		}
	}
	fa := procText(t, compatStructure(t, bin, 1), "fa")
	if n := len(unknownDeval.FindAllString(fa, -1)); n != 1 {
		t.Errorf("compat mode: fa holds %d deval callees at <unknown>:0, want 1\n%s", n, fa)
	}
	if !strings.Contains(fa, `b.c" n="&lt;inline&gt;"`) {
		t.Errorf("compat mode: b.c's deval code is not under an <inline> guard in fa's merged callee\n%s", fa)
	}
	// The node's line is that of the loops of its own file (locateTree
	// reads those of the callee's base name only), a.c's, not b.c's
	// deval loop on an earlier line; a.c's lines above it are foreign.
	loop, first := lineOf(t, filepath.Join(src, "a.c"), "for ("), lineOf(t, filepath.Join(src, "a.c"), "double y")
	callee := fmt.Sprintf(`<A [^>]*l="0" f="&lt;unknown&gt;" n="" v="\{\}">\n<A [^>]*l="%d" f="[^"]*/a\.c" n="deval"`, loop)
	at := regexp.MustCompile(callee).FindStringIndex(fa)
	if at == nil {
		t.Fatalf("compat mode: the merged deval is not a.c:%d, its own file's loop line\n%s", loop, fa)
	}
	merged := alienText(fa[at[0]:])
	if !strings.Contains(merged, fmt.Sprintf(`l="%d" f="%s" n="&lt;inline&gt;"`, first, filepath.Join(dir, "a.c"))) {
		t.Errorf("compat mode: a.c:%d, above the merged deval's line, is not in an <inline> guard\n%s", first, merged)
	}
}

// alienText is the A element s starts with, up to its closing tag.
func alienText(s string) string {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "<A "):
			depth++
		case strings.HasPrefix(s[i:], "</A>"):
			depth--
			if depth == 0 {
				return s[:i+len("</A>")]
			}
		}
	}
	return s
}

// lineOf is the number of the first line of file that contains s.
func lineOf(t *testing.T, file, s string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			return i + 1
		}
	}
	t.Fatalf("%s: no line holds %q", file, s)
	return 0
}

// unknownDeval is deval's callee at a call site hpcstruct cannot read.
var unknownDeval = regexp.MustCompile(`<A [^>]*l="0" f="&lt;unknown&gt;" n="" v="\{\}">\n<A [^>]*n="deval"`)

// procText is the XML of the procedure named name in a structure file.
func procText(t *testing.T, xml []byte, name string) string {
	t.Helper()
	s := string(xml)
	i := strings.Index(s, `<P i="`)
	for i >= 0 {
		end := strings.Index(s[i:], "</P>")
		if end < 0 {
			break
		}
		p := s[i : i+end]
		if strings.Contains(p[:strings.Index(p, ">")], ` n="`+name+`"`) {
			return p
		}
		next := strings.Index(s[i+end:], `<P i="`)
		if next < 0 {
			break
		}
		i += end + next
	}
	t.Fatalf("no procedure %s", name)
	return ""
}
