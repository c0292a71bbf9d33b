package scopes

import (
	"bytes"
	"strings"
	"testing"

	"bloop/structure"
)

// TestEmptyFile: a file without procedures (a nil procedure in the
// stream, hpcstruct's empty F for a ppc64 local entry's file) is written
// as an F element with nothing in it, in its place, and numbered.
func TestEmptyFile(t *testing.T) {
	p := &structure.Scope{Kind: structure.Proc, Name: "main", Entry: 0x100, Ranges: nil}
	m := structure.NewModule("/bin/x", "x", []structure.ProcResult{{File: "a.c", Scope: p}, {File: "b.h", Scope: nil}})
	if len(m.Files) != 2 || len(m.Files[1].Procs) != 0 {
		t.Fatalf("files %+v", m.Files)
	}
	var buf bytes.Buffer
	if err := structure.WriteXML(&buf, []*structure.Module{m}, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "</F>\n<F i=\"5\" n=\"b.h\">\n</F>\n</LM>") {
		t.Errorf("no empty F for b.h:\n%s", buf.String()[strings.Index(buf.String(), "<LM"):])
	}
	buf.Reset()
	j := structure.NewJSONWriter(&buf)
	j.BeginModule("/bin/x", "x")
	j.Proc("b.h", nil)
	j.EndModule()
	if err := j.Close(); err != nil || strings.Contains(buf.String(), "b.h") {
		t.Errorf("JSON lists the empty file (%v):\n%s", err, buf.String())
	}
}
