package profile

import (
	"bytes"
	"compress/gzip"
	"io"
	"slices"
	"testing"

	"bloop/sample"
)

// fields decodes the top level of a protocol buffer: field number to the
// values (varints) or payloads (length-delimited).
func fields(t *testing.T, b []byte) map[int][][]byte {
	t.Helper()
	out := map[int][][]byte{}
	varint := func() uint64 {
		var v uint64
		for s := 0; ; s += 7 {
			if len(b) == 0 {
				t.Fatal("truncated varint")
			}
			c := b[0]
			b = b[1:]
			v |= uint64(c&0x7f) << s
			if c < 0x80 {
				return v
			}
		}
	}
	for len(b) > 0 {
		key := varint()
		switch key & 7 {
		case 0:
			out[int(key>>3)] = append(out[int(key>>3)], []byte{byte(varint())})
		case 2:
			n := varint()
			out[int(key>>3)] = append(out[int(key>>3)], b[:n])
			b = b[n:]
		default:
			t.Fatalf("wire type %d", key&7)
		}
	}
	return out
}

func TestPprofEncoding(t *testing.T) {
	p := synthetic()
	p.pprof = newPprofBuilder()
	p.Meta = sample.Meta{Command: []string{"prog"}, Freq: 1000}
	mod := &Module{Path: "/bin/prog", Name: "prog"}
	mainP := &Elem{Kind: ElemProc, Name: "main", File: "m.c"}
	workP := &Elem{Kind: ElemProc, Name: "work", File: "w.c"}
	loop := &Elem{Kind: ElemLoop, File: "w.c", Line: 12}
	inl := &Elem{Kind: ElemInline, Name: "helper", File: "h.h", CallLine: 13}
	b := p.pprof
	leaf := b.location(Frame{Mod: mod, Addr: 0x1010}, []*Elem{workP, loop, inl, {Kind: ElemStmt, Line: 4}})
	caller := b.location(Frame{Mod: mod, Addr: 0x2004}, []*Elem{mainP, {Kind: ElemStmt, Line: 5}})
	for i := 0; i < 3; i++ {
		b.add(p, &sample.Sample{Tid: 7}, nil, nil, Complete)
	}
	b.samples["x"] = &pprofSample{locs: []uint64{leaf, caller}, tid: 7, count: 5}
	b.order = append(b.order, "x")
	var buf bytes.Buffer
	if err := p.WritePprof(&buf); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(zr)
	f := fields(t, raw)
	var strs []string
	for _, s := range f[6] {
		strs = append(strs, string(s))
	}
	if len(strs) == 0 || strs[0] != "" {
		t.Fatalf("string table must start with \"\": %q", strs)
	}
	for _, s := range []string{"helper", "loop at w.c:12", "work", "main", "samples", "cpu", "nanoseconds", "/bin/prog"} {
		if !slices.Contains(strs, s) {
			t.Errorf("string table lacks %q: %q", s, strs)
		}
	}
	if len(f[2]) != 2 || len(f[4]) != 2 || len(f[5]) != 4 || len(f[3]) != 1 {
		t.Errorf("%d samples, %d locations, %d functions, %d mappings; want 2, 2, 4, 1", len(f[2]), len(f[4]), len(f[5]), len(f[3]))
	}
	// The leaf location holds three lines, innermost (the inlined helper) first.
	lines := fields(t, f[4][0])[4]
	if len(lines) != 3 {
		t.Fatalf("leaf location has %d lines, want 3 (helper, loop, work)", len(lines))
	}
	if fn := fields(t, lines[0])[1][0][0]; strs[fields(t, f[5][fn-1])[2][0][0]] != "helper" {
		t.Errorf("innermost line is not the inlined helper")
	}
}
