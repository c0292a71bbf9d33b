package structure

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/structtest"
)

func TestParseSmall(t *testing.T) {
	d, err := Parse(strings.NewReader(structtest.SmallDoc), "small.hpcstruct")
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "small.hpcstruct" || d.Root.Tag != "HPCToolkitStructure" || d.Root.Line != 6 {
		t.Fatalf("root = %q line %d, name %q", d.Root.Tag, d.Root.Line, d.Name)
	}
	p := d.Root.Children[0].Children[0].Children[0]
	if p.Tag != "P" || p.Line != 9 || p.Value("n") != "main" {
		t.Fatalf("P = %+v", p)
	}
	wantKeys := []string{"i", "n", "l", "v"}
	for i, a := range p.Attrs {
		if a.Key != wantKeys[i] {
			t.Errorf("P attrs not in file order: %v", p.Attrs)
		}
	}
	inner := p.Children[1].Children[1].Children[0]
	if inner.Tag != "A" || inner.Value("n") != "g" || inner.Line != 14 {
		t.Errorf("inner A = %+v", inner)
	}
	if s := inner.Children[0]; s.Line != 15 || s.Value("v") != "{[0x110-0x118)}" {
		t.Errorf("S = %+v", s)
	}
}

func TestParseErrors(t *testing.T) {
	const head = `<HPCToolkitStructure i="0" version="4.9" n=""><LM i="2" n="x" has-calls="0" v="{}">`
	const tail = `</LM></HPCToolkitStructure>`
	tests := []struct {
		name, src, msg string
	}{
		{"empty", "", "empty file"},
		{"blank", "  \n\t\n", "empty file"},
		{"text", "hello world", "not a structure file: starts with neither '<' (hpcstruct XML) nor '{' (bloop JSON)"},
		{"elf", "\x7fELF\x02\x01\x01", "not a structure file"},
		{"json", `{"a": 1}`, `not a bloop JSON structure file: no "version"`},
		{"mismatched", head + `<F n="x"><P n="p" l="1"></F>` + tail, "end tag </F> does not match <P> opened at line 1"},
		{"bad-syntax", `<HPCToolkitStructure i="0></HPCToolkitStructure>`, "not well-formed XML: unescaped <"},
		{"bad-token", `<HPCToolkitStructure i=0></HPCToolkitStructure>`, "not well-formed XML"},
		{"html", "<html><body></body></html>", "root element is <html>, not <HPCToolkitStructure>"},
		{"no-root", `<?xml version="1.0"?>` + "\n", "no root element"},
		{"unknown", head + `<F n="x.c"><Q l="1"/></F>` + tail, "unknown element <Q>"},
		{"namespaced", head + `<x:F n="x.c"/>` + tail, "unknown element <x:F>"},
		{"misplaced", head + `<S l="1" v="{[0x1-0x2)}"/>` + tail, "<S> is not allowed inside <LM>"},
		{"nested-S", head + `<F n="x"><P n="p" l="1" v="{[0x1-0x2)}"><S l="1" v="{[0x1-0x2)}"><S l="2"/></S></P></F>` + tail, "<S> is not allowed inside <S>"},
		{"bad-v", head + `<F n="x"><P n="p" l="1" v="{[0x1-0x2),[0x3-0x4)}"/></F>` + tail, "attribute v: bad range set"},
		{"bad-v-hex", head + `<F n="x"><P n="p" l="1" v="{[0X1-0x2)}"/></F>` + tail, "attribute v: bad range set"},
		{"dup-attr", head + `<F n="x" n="y"/>` + tail, "attribute n twice"},
		{"text-inside", head + `<F n="x">junk</F>` + tail, "unexpected text inside <F>"},
		{"unterminated", head + `<F n="x">`, "truncated XML: <F> opened at line 1 is never closed"},
		{"cut-tag", head + `<F n="x`, "truncated"},
		{"two-roots", head + tail + head + tail, "second root element"},
		{"stray-end", head + tail + `</LM>`, "unexpected end tag </LM>"},
		{"deep", head + `<F n="x"><P n="p" l="1">` + strings.Repeat(`<L l="1">`, 1200) + strings.Repeat("</L>", 1200) + `</P></F>` + tail, "nested deeper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "case-" + tt.name + ".hpcstruct"
			// Ids are added: the cases are about other rules.
			d, err := Parse(strings.NewReader(structtest.WithIDs(tt.src)), name)
			if err == nil {
				t.Fatalf("no error; root %+v", d.Root)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.File != name {
				t.Errorf("error %v is not a *ParseError for %s", err, name)
			}
			if !strings.HasPrefix(err.Error(), name+":") || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error = %q, want %q: ...%q...", err, name, tt.msg)
			}
		})
	}
}

func TestParseErrorLine(t *testing.T) {
	src := strings.Replace(structtest.SmallDoc, `<S i="7" l="7"`, `<Z i="7" l="7"`, 1)
	src = strings.Replace(src, `</Z>`, `</Z>`, 1)
	_, err := Parse(strings.NewReader(src), "f.hpcstruct")
	if err == nil || !strings.HasPrefix(err.Error(), "f.hpcstruct:12: unknown element <Z>") {
		t.Errorf("err = %v, want f.hpcstruct:12: unknown element <Z>", err)
	}
}

func TestParseFile(t *testing.T) {
	_, err := ParseFile("testdata/does-not-exist.hpcstruct")
	if err == nil || !strings.Contains(err.Error(), "does-not-exist.hpcstruct") {
		t.Errorf("missing file: err = %v", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "empty.hpcstruct")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseFile(path); err == nil || err.Error() != path+": empty file" {
		t.Errorf("empty file: err = %v", err)
	}
}

// TestTruncatedReal cuts real files in half, and one file at every byte:
// each cut must be an error that names the file and says it is truncated.
func TestTruncatedReal(t *testing.T) {
	files, empty := structtest.RealFiles(t)
	for _, f := range empty {
		if _, err := ParseFile(f); err == nil || !strings.Contains(err.Error(), f+": empty file") {
			t.Errorf("%s: err = %v, want empty file", f, err)
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Parse(bytes.NewReader(data[:len(data)/2]), f)
		if err == nil || !strings.HasPrefix(err.Error(), f+":") || !strings.Contains(err.Error(), "truncated") {
			t.Errorf("first half of %s: err = %v", f, err)
		}
	}
	f := filepath.Join(structtest.HPCToolkitStructDir, "inlines+loops-x86_64-gcc12-dr.hpcstruct")
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	end := bytes.LastIndexByte(data, '>') + 1
	for n := 1; n < end; n++ {
		_, err := Parse(bytes.NewReader(data[:n]), "cut.hpcstruct")
		if err == nil || !strings.HasPrefix(err.Error(), "cut.hpcstruct:") || !strings.Contains(err.Error(), "truncated") {
			t.Fatalf("prefix of %d bytes: err = %v", n, err)
		}
	}
	if _, err := Parse(bytes.NewReader(data[:end]), "cut.hpcstruct"); err != nil {
		t.Errorf("file without its final newline: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(structtest.SmallDoc))
	f.Add([]byte(structtest.SmallDoc[:len(structtest.SmallDoc)/2]))
	f.Add([]byte(strings.ReplaceAll(structtest.SmallDoc, `i="`, `x="`)))
	f.Add([]byte(`<HPCToolkitStructure><LM><F n="a"><P n="p"><A><S l="1" v="{[0x1-0x2)}"/></A></P></F></LM></HPCToolkitStructure>`))
	f.Add([]byte(`<HPCToolkitStructure><LM><F n="a"><P n="p" v="{}"/><P n="p" v="{}"/></F></LM></HPCToolkitStructure>`))
	f.Add([]byte(`<HPCToolkitStructure><LM><F><P><S v="{[0x1-0x9)}"/></P><P><S v="{[0x4-0x6)}"/></P></F></LM></HPCToolkitStructure>`))
	f.Add([]byte("<a>"))
	f.Add([]byte(""))
	f.Add([]byte("\x7fELF"))
	for _, c := range validationCases() {
		if !strings.HasPrefix(c.name, "json") && len(c.src) < 64<<10 {
			f.Add([]byte(c.src))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, ok := fuzzParse(t, data)
		if !ok {
			return
		}
		if _, err := Canonicalize(d); err != nil {
			var re *RangelessError
			if !errors.As(err, &re) {
				t.Fatalf("Canonicalize: %v", err)
			}
		}
	})
}

// fuzzParse parses a fuzzed input; an error must name the file and quote
// excerpts only, never a whole value.
func fuzzParse(t *testing.T, data []byte) (*Doc, bool) {
	d, err := Parse(bytes.NewReader(data), "fuzz")
	if err != nil {
		if !strings.HasPrefix(err.Error(), "fuzz:") {
			t.Fatalf("error does not name the file: %v", err)
		}
		if len(err.Error()) > 400 {
			t.Fatalf("error of %d bytes: %.500s", len(err.Error()), err)
		}
		return nil, false
	}
	return d, true
}
