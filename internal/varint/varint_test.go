package varint

import (
	"encoding/binary"
	"testing"
)

func TestReader(t *testing.T) {
	var b []byte
	b = binary.AppendUvarint(b, 300)
	b = binary.AppendVarint(b, -5)
	b = binary.AppendUvarint(b, 2)
	b = append(b, "ab"...)
	b = binary.AppendUvarint(b, 1)
	r := &Reader{B: b}
	if u, i, s := r.Uint(), r.Int(), r.Str(); u != 300 || i != -5 || s != "ab" {
		t.Errorf("read %d %d %q", u, i, s)
	}
	if k, ok := r.Ref(2); !ok || k != 1 {
		t.Errorf("ref %d %v", k, ok)
	}
	if err := r.End(); err != nil {
		t.Errorf("end: %v", err)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		read func(*Reader)
	}{
		{"truncated", []byte{0x80}, func(r *Reader) { r.Uint() }},
		{"count past the end", []byte{5, 1}, func(r *Reader) { r.Count() }},
		{"reference out of range", []byte{3}, func(r *Reader) { r.Ref(3) }},
		{"bytes left", []byte{1, 2}, func(r *Reader) { r.Uint() }},
	} {
		r := &Reader{B: tc.b}
		tc.read(r)
		if r.End() == nil {
			t.Errorf("%s: no error", tc.name)
		}
		if r.Uint() != 0 {
			t.Errorf("%s: a read after the error gave a value", tc.name)
		}
	}
}
