package structure

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/structtest"
)

// TestParseEveryRealFile: the rules reject nothing that hpcstruct or bloop
// writes: every structure file of the shared corpora and every golden.
func TestParseEveryRealFile(t *testing.T) {
	var files []string
	walk := func(root string, exts ...string) {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			for _, ext := range exts {
				if strings.HasSuffix(path, ext) {
					if st, err := d.Info(); err == nil && st.Size() > 0 {
						files = append(files, path)
					}
				}
			}
			return nil
		})
	}
	walk("../testdata", ".hpcstruct", ".json")
	if len(files) == 0 {
		t.Error("no goldens under ../testdata")
	}
	if _, err := os.Stat("../../shared"); err == nil {
		walk("../../shared", ".hpcstruct")
	} else {
		t.Log("../../shared absent: goldens only")
	}
	t.Logf("%d files", len(files))
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			if _, err := ParseFile(f); err != nil {
				t.Error(err)
			}
		})
	}
}

// validHead and validTail wrap elements into a valid XML document; the
// element under test is on line 6.
const (
	validHead = `<?xml version="1.0"?>
<HPCToolkitStructure i="0" version="4.9" n="">
<LM i="2" n="/bin/x" has-calls="0" v="{}">
<F i="3" n="/src/x.c">
<P i="4" n="main" l="5" v="{[0x100-0x101)}">
`
	validTail = `
</P>
</F>
</LM>
</HPCToolkitStructure>
`
)

// validJSON wraps one scope into a valid JSON document; the scope is on line 4.
func validJSON(scope string) string {
	return `{"version": 1, "modules": [{"path": "/bin/x", "files": [{"name": "/src/x.c", "procs": [
{"kind": "P", "name": "main", "line": 5, "entry": "0x100", "children": [
{"kind": "S", "line": 5, "ranges": [["0x100", "0x101"]]},
` + scope + `
]}]}]}]}
`
}

// validationCase is a file breaking one value rule, and the start of its
// message; names starting "json" are JSON.
type validationCase struct{ name, src, msg string }

func validationCases() []validationCase {
	big := strings.Repeat("9", 23)
	return []validationCase{
		{"l-text", validHead + `<S i="5" l="abc" v="{[0x100-0x108)}"/>` + validTail, `x.hpcstruct:6: <S> attribute l: "abc": want a decimal integer from 0 to 4294967295`},
		{"l-negative", validHead + `<S i="5" l="-7" v="{[0x100-0x108)}"/>` + validTail, `:6: <S> attribute l: "-7": want a decimal integer`},
		{"l-23-digits", validHead + `<S i="5" l="` + big + `" v="{[0x100-0x108)}"/>` + validTail, `:6: <S> attribute l: "` + big + `": want`},
		{"l-2^32", validHead + `<S i="5" l="4294967296" v="{[0x100-0x108)}"/>` + validTail, `:6: <S> attribute l: "4294967296"`},
		{"l-plus", validHead + `<S i="5" l="+7" v="{[0x100-0x108)}"/>` + validTail, `:6: <S> attribute l: "+7"`},
		{"l-leading-zero", validHead + `<S i="5" l="07" v="{[0x100-0x108)}"/>` + validTail, `:6: <S> attribute l: "07"`},
		{"l-empty", validHead + `<S i="5" l="" v="{[0x100-0x108)}"/>` + validTail, `:6: <S> attribute l: ""`},
		{"L-l", validHead + `<L i="5" l="1.5" f="x.c"/>` + validTail, `:6: <L> attribute l: "1.5"`},
		{"A-l", validHead + `<A i="5" l="x" f="x.c" n="" v="{}"/>` + validTail, `:6: <A> attribute l: "x"`},
		{"P-s", validHead + `<P i="5" n="g" s="x" l="1"/>` + validTail, `:6: <P> attribute s: "x"`},
		{"P-no-i", validHead + `<P n="g" l="1" v="{[0x200-0x201)}"/>` + validTail, `:6: <P> lacks attribute i`},
		{"P-no-n", validHead + `<P i="5" l="1" v="{[0x200-0x201)}"/>` + validTail, `:6: <P> lacks attribute n`},
		{"P-no-l", validHead + `<P i="5" n="g" v="{[0x200-0x201)}"/>` + validTail, `:6: <P> lacks attribute l`},
		{"S-no-l", validHead + `<S i="5" v="{[0x100-0x108)}"/>` + validTail, `:6: <S> lacks attribute l`},
		{"S-bare", validHead + `<S/>` + validTail, `:6: <S> lacks attribute i`},
		{"L-no-l", validHead + `<L i="5" f="x.c"/>` + validTail, `:6: <L> lacks attribute l`},
		{"A-no-i", validHead + `<A l="1" f="x.c" n="" v="{}"/>` + validTail, `:6: <A> lacks attribute i`},
		{"i-zero", validHead + `<S i="0" l="1" v="{[0x100-0x108)}"/>` + validTail, `:6: <S> attribute i: "0": want a decimal integer from 1 to 4294967295`},
		{"i-negative", validHead + `<S i="-5" l="1" v="{[0x100-0x108)}"/>` + validTail, `:6: <S> attribute i: "-5"`},
		{"i-hex", validHead + `<S i="0x5" l="1" v="{[0x100-0x108)}"/>` + validTail, `:6: <S> attribute i: "0x5"`},
		{"v-text", validHead + `<S i="5" l="1" v="abc"/>` + validTail, `:6: <S> attribute v: bad range set: range set "abc": must be enclosed in {}`},
		{"v-reversed", validHead + `<S i="5" l="1" v="{[0x108-0x100)}"/>` + validTail, `:6: <S> attribute v: bad range set: range set "{[0x108-0x100)}": "[0x108-0x100)" is empty or reversed`},
		{"v-long-bad", validHead + `<S i="5" l="1" v="{` + strings.Repeat("[0x1-0x2) ", 50000) + `}"/>` + validTail,
			`:6: <S> attribute v: bad range set: range set "{[0x1-0x2) [0x1-0x2) [0x1-0x2) [0x1-0x2)"... (500002 bytes): "[0x1-0x2)" is out of order`},
		{"has-calls", strings.Replace(validHead, `has-calls="0"`, `has-calls="2"`, 1) + validTail, `:3: <LM> attribute has-calls: "2": want 0 or 1`},
		{"LM-no-n", strings.Replace(validHead, ` n="/bin/x"`, ``, 1) + validTail, `:3: <LM> lacks attribute n`},
		{"F-no-n", strings.Replace(validHead, ` n="/src/x.c"`, ``, 1) + validTail, `:4: <F> lacks attribute n`},
		{"root-no-version", strings.Replace(validHead, ` version="4.9"`, ``, 1) + validTail, `:2: <HPCToolkitStructure> lacks attribute version`},
		{"many-attributes", validHead + `<S i="5" l="1"` + strings.Repeat(` x=""`, 40) + `/>` + validTail, `:6: <S> has 42 attributes, more than the limit of 32`},
		{"root-i", strings.Replace(validHead, `<HPCToolkitStructure i="0"`, `<HPCToolkitStructure i="zero"`, 1) + validTail, `:2: <HPCToolkitStructure> attribute i: "zero": want a decimal integer from 0 to`},

		// The same rules in JSON, worded in its fields.
		{"json-l-negative", validJSON(`{"kind": "S", "line": -7, "ranges": [["0x101", "0x108"]]}`), `x.json:4: modules[0].files[0].procs[0].children[1]: S scope "line": "-7": want a decimal integer from 0 to 4294967295`},
		{"json-l-23-digits", validJSON(`{"kind": "S", "line": ` + big + `}`), `:4: modules[0].files[0].procs[0].children[1]: S scope "line": "` + big + `": want`},
		{"json-l-exp", validJSON(`{"kind": "L", "line": 1e3}`), `:4: modules[0].files[0].procs[0].children[1]: L scope "line": "1e3"`},
		{"json-l-string", validJSON(`{"kind": "L", "line": "7"}`), `:4: modules[0].files[0].procs[0].children[1]: L scope "line": "\"7\""`},
		{"json-no-line", validJSON(`{"kind": "A", "file": "x.c"}`), `:4: modules[0].files[0].procs[0].children[1]: A scope without "line"`},
		{"json-null-line", validJSON(`{"kind": "A", "line": null}`), `:4: modules[0].files[0].procs[0].children[1]: A scope without "line"`},
		{"json-P-no-line", `{"version": 1, "modules": [{"files": [{"name": "x.c", "procs": [
{"kind": "P", "name": "p"}]}]}]}`, `:2: modules[0].files[0].procs[0]: P scope without "line"`},
		{"json-version-long", `{"version": 1` + strings.Repeat("0", 100_000) + `}`, `x.json:1: not a bloop JSON structure file: version is a JSON number 1` + strings.Repeat("0", 32) + `..., want integer`},
		{"json-ranges", validJSON(`{"kind": "S", "line": 1, "ranges": [["0x108", "0x101"]]}`), `:4: modules[0].files[0].procs[0].children[1]: S scope "ranges": bad range set: range set "{[0x108-0x101)}": "[0x108-0x101)" is empty or reversed`},
	}
}

func TestValidationErrors(t *testing.T) {
	for _, tt := range validationCases() {
		t.Run(tt.name, func(t *testing.T) {
			name := "x.hpcstruct"
			if strings.HasPrefix(tt.name, "json") {
				name = "x.json"
			}
			_, err := Parse(strings.NewReader(tt.src), name)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, name+":") || !strings.Contains(msg, tt.msg) {
				t.Errorf("error = %q, want %q", msg, tt.msg)
			}
			if len(msg) > 300 || strings.Contains(msg, "\n") {
				t.Errorf("error is not one short line: %d bytes", len(msg))
			}
		})
	}
}

// countingReader counts what Parse reads.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestHugeValue: a value of 9.6 MB is refused once maxPiece of it is read,
// with a short message that names the file and the line where it starts.
func TestHugeValue(t *testing.T) {
	const size = 9_600_000
	huge := strings.Repeat("x", size)
	tests := []struct {
		name, src, msg string
	}{
		{"v", validHead + `<S i="5" l="1" v="{` + huge + `}"/>` + validTail, `x.hpcstruct:6: <S> attribute v longer than 1048576 bytes, the limit for one piece: "{xxxxxxx`},
		{"n", validHead + `<P i="5" l="1" n='` + huge + `'/>` + validTail, `x.hpcstruct:6: <P> attribute n longer than 1048576 bytes`},
		{"name", validHead + `<S` + huge + `/>` + validTail, `x.hpcstruct:6: tag <Sxxxxxxx`},
		{"text", validHead + huge + validTail, `x.hpcstruct:5: text longer than 1048576 bytes`},
		{"comment", validHead + `<!--` + huge + `-->` + validTail, `x.hpcstruct:6: comment longer than`},
		{"json-string", validJSON(`{"kind": "A", "line": 1, "name": "` + huge + `"}`), `x.json:4: JSON string longer than 1048576 bytes, the limit for one piece: "xxxx`},
		{"json-number", validJSON(`{"kind": "A", "line": 1` + strings.Repeat("0", size) + `}`), `x.json:4: JSON text between strings longer than 1048576 bytes, the limit for one piece: ": 10000`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "x.hpcstruct"
			if strings.HasPrefix(tt.name, "json") {
				name = "x.json"
			}
			r := &countingReader{r: strings.NewReader(tt.src)}
			_, err := Parse(r, name)
			if err == nil {
				t.Fatal("no error")
			}
			if msg := err.Error(); !strings.HasPrefix(msg, tt.msg) || len(msg) >= 200 {
				t.Errorf("error (%d bytes) = %q, want one under 200 bytes starting %q", len(msg), msg, tt.msg)
			}
			if r.n > 3*maxPiece {
				t.Errorf("read %d bytes before failing, want about %d", r.n, maxPiece)
			}
		})
	}
}

// TestValueAtLimit: a value of exactly maxPiece bytes is read, however the
// input is cut into reads.
func TestValueAtLimit(t *testing.T) {
	name := strings.Repeat("n", maxPiece)
	for _, src := range []string{
		validHead + `<A i="5" l="1" f="x.c" n="` + name + `" v="{}"/>` + validTail,
		validJSON(`{"kind": "A", "line": 1, "name": "` + name + `"}`),
	} {
		d, err := Parse(io.MultiReader(strings.NewReader(src[:len(src)/3]), bytes.NewReader([]byte(src[len(src)/3:]))), "x")
		if err != nil {
			t.Fatal(err)
		}
		if !hasName(d.Root, name) {
			t.Errorf("the name of %d bytes is not read back", len(name))
		}
	}
}

func hasName(n *Node, name string) bool {
	if n.Value("n") == name {
		return true
	}
	for _, c := range n.Children {
		if hasName(c, name) {
			return true
		}
	}
	return false
}

// TestLongMessageClipped: what a message quotes whole (here an element's
// name) is clipped.
func TestLongMessageClipped(t *testing.T) {
	tag := "Q" + strings.Repeat("q", 100_000)
	_, err := Parse(strings.NewReader(validHead+"<"+tag+"/>"+validTail), "x.hpcstruct")
	if err == nil || !strings.HasPrefix(err.Error(), "x.hpcstruct:6: unknown element <Qqqq") || len(err.Error()) > 400 {
		t.Errorf("err = %.500v", err)
	}
}

// TestGuardChunking: the guard's verdict does not depend on how the input
// is cut into reads: a file read one byte at a time parses the same.
func TestGuardChunking(t *testing.T) {
	for _, src := range []string{structtest.SmallDoc, smallJSON} {
		want := mustParse(t, src, "x")
		got, err := Parse(&oneByte{strings.NewReader(src)}, "x")
		if err != nil {
			t.Fatal(err)
		}
		if d := sameTree(want.Root, got.Root, ""); d != "" {
			t.Error(d)
		}
	}
	huge := validHead + `<S i="5" l="1" v="{` + strings.Repeat("x", maxPiece+1) + `}"/>` + validTail
	_, err := Parse(&oneByte{strings.NewReader(huge)}, "x")
	if err == nil || !strings.HasPrefix(err.Error(), "x:6: <S> attribute v longer than") {
		t.Errorf("err = %v", err)
	}
}

type oneByte struct{ r io.Reader }

func (o *oneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}
