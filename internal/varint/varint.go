// Package varint reads the varint encodings of bloop's own cache entries
// (the report's scope indexes and measurement structures, the unwinder's
// bounds, jumps and recipes), remembering the first error: a damaged
// entry is refused whole and computed again, never half read.
package varint

import (
	"encoding/binary"
	"fmt"
)

// Reader reads from B; Err is the first problem met (then B is empty
// and every later read returns zero).
type Reader struct {
	B   []byte
	Err error
}

// Fail records a problem, unless one is recorded already.
func (r *Reader) Fail(format string, args ...any) {
	if r.Err == nil {
		r.Err = fmt.Errorf(format, args...)
	}
	r.B = nil
}

// Uint reads an unsigned varint.
func (r *Reader) Uint() uint64 {
	v, n := binary.Uvarint(r.B)
	if n <= 0 {
		r.Fail("truncated")
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Int reads a signed varint.
func (r *Reader) Int() int64 {
	v, n := binary.Varint(r.B)
	if n <= 0 {
		r.Fail("truncated")
		return 0
	}
	r.B = r.B[n:]
	return v
}

// Count reads a length, bounded by the bytes left (every item takes a
// byte at least), so damage cannot allocate without limit.
func (r *Reader) Count() int {
	n := r.Uint()
	if n > uint64(len(r.B)) {
		r.Fail("count %d past the end", n)
		return 0
	}
	return int(n)
}

// Bytes reads a length and as many bytes.
func (r *Reader) Bytes() []byte {
	n := r.Count()
	b := r.B[:n]
	r.B = r.B[n:]
	return b
}

// Str reads a length and a string of as many bytes.
func (r *Reader) Str() string { return string(r.Bytes()) }

// Ref reads a number below n; ok is false (and Err set) otherwise.
func (r *Reader) Ref(n int) (int, bool) {
	v := r.Uint()
	if r.Err != nil {
		return 0, false
	}
	if v >= uint64(n) {
		r.Fail("reference %d of %d", v, n)
		return 0, false
	}
	return int(v), true
}

// End reports Err, or that bytes are left after what was read.
func (r *Reader) End() error {
	if r.Err == nil && len(r.B) != 0 {
		r.Fail("%d bytes after the end", len(r.B))
	}
	return r.Err
}

// Strings numbers the strings an entry refers to, from 0 in the order
// first given: an entry stores each once (List), then their numbers.
type Strings struct {
	no   map[string]uint64
	List []string
}

// Ref is s's number, given it if new.
func (t *Strings) Ref(s string) uint64 {
	n, ok := t.no[s]
	if !ok {
		if t.no == nil {
			t.no = map[string]uint64{}
		}
		n = uint64(len(t.List))
		t.no[s] = n
		t.List = append(t.List, s)
	}
	return n
}
