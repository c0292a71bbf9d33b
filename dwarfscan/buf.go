package dwarfscan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"
)

// Causes wrapped by DecodeError.
var (
	ErrTruncated    = errors.New("data ends early")
	ErrUnknownForm  = errors.New("unknown attribute form")
	ErrUnknownCode  = errors.New("abbreviation code not in the unit's table")
	ErrBadOffset    = errors.New("offset out of range")
	ErrBadVersion   = errors.New("unsupported version")
	ErrNoSection    = errors.New("section needed but absent")
	ErrMalformed    = errors.New("malformed")
	ErrAddressSize  = errors.New("unsupported address size")
	ErrBigEndian    = errors.New("big-endian DWARF not supported")
	errNoUnit       = errors.New("no such unit")
	errBeforeHeader = errors.New("offset inside a unit header")
)

// DecodeError tells which section and offset could not be decoded, and why.
type DecodeError struct {
	Section string // e.g. ".debug_info"
	Offset  uint64 // offset within Section
	Err     error  // cause; one of the Err* values, possibly wrapped with detail
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("dwarfscan: %s at offset %#x: %v", e.Section, e.Offset, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

func decodeErr(sec string, off int, err error) error {
	return &DecodeError{Section: sec, Offset: uint64(off), Err: err}
}

// uleb reads an unsigned LEB128 from b at pos. ok is false when b ends
// inside the number. Bits beyond 64 are dropped.
func uleb(b []byte, pos int) (v uint64, next int, ok bool) {
	var shift uint
	for i := pos; i < len(b); i++ {
		c := b[i]
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c < 0x80 {
			return v, i + 1, true
		}
	}
	return 0, pos, false
}

// sleb reads a signed LEB128 from b at pos.
func sleb(b []byte, pos int) (v int64, next int, ok bool) {
	var u uint64
	var shift uint
	for i := pos; i < len(b); i++ {
		c := b[i]
		if shift < 64 {
			u |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c < 0x80 {
			if shift < 64 && c&0x40 != 0 {
				u |= ^uint64(0) << shift
			}
			return int64(u), i + 1, true
		}
	}
	return 0, pos, false
}

// fixed reads an n-byte little-endian unsigned value (n in 1..8).
func fixed(b []byte, pos, n int) (uint64, bool) {
	if pos < 0 || n > len(b)-pos {
		return 0, false
	}
	switch n {
	case 1:
		return uint64(b[pos]), true
	case 2:
		return uint64(binary.LittleEndian.Uint16(b[pos:])), true
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[pos:])), true
	case 8:
		return binary.LittleEndian.Uint64(b[pos:]), true
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[pos+i])
	}
	return v, true
}

// cstr returns the NUL-terminated string at off in sec without copying.
// Section bytes must never be modified while strings obtained from them
// are in use.
func cstr(sec []byte, off uint64) (string, bool) {
	if off >= uint64(len(sec)) {
		return "", false
	}
	rest := sec[off:]
	n := bytes.IndexByte(rest, 0)
	if n < 0 {
		return "", false
	}
	if n == 0 {
		return "", true
	}
	return unsafe.String(&rest[0], n), true
}

// view returns b as a string without copying.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// buf is a cursor with a sticky error, for the less hot parts (headers,
// range lists). data is a whole section, possibly cut at the end of the
// current structure, so pos is a section offset.
type buf struct {
	data []byte
	pos  int
	sec  string
	err  error
}

func (b *buf) fail(err error) {
	if b.err == nil {
		b.err = decodeErr(b.sec, b.pos, err)
	}
	b.pos = len(b.data)
}

func (b *buf) u8() uint8 {
	if b.pos >= len(b.data) {
		b.fail(ErrTruncated)
		return 0
	}
	v := b.data[b.pos]
	b.pos++
	return v
}

func (b *buf) fixed(n int) uint64 {
	v, ok := fixed(b.data, b.pos, n)
	if !ok {
		b.fail(ErrTruncated)
		return 0
	}
	b.pos += n
	return v
}

func (b *buf) uleb() uint64 {
	v, next, ok := uleb(b.data, b.pos)
	if !ok {
		b.fail(ErrTruncated)
		return 0
	}
	b.pos = next
	return v
}

func (b *buf) sleb() int64 {
	v, next, ok := sleb(b.data, b.pos)
	if !ok {
		b.fail(ErrTruncated)
		return 0
	}
	b.pos = next
	return v
}

// bytes returns the next n bytes.
func (b *buf) bytes(n uint64) []byte {
	if n > uint64(len(b.data)-b.pos) {
		b.fail(ErrTruncated)
		return nil
	}
	s := b.data[b.pos : b.pos+int(n)]
	b.pos += int(n)
	return s
}

// cstr returns the NUL-terminated string at the cursor, copied when
// copy is set.
func (b *buf) cstr(copied bool) string {
	if b.pos >= len(b.data) {
		b.fail(ErrTruncated)
		return ""
	}
	rest := b.data[b.pos:]
	n := bytes.IndexByte(rest, 0)
	if n < 0 {
		b.fail(ErrTruncated)
		return ""
	}
	b.pos += n + 1
	if copied {
		return string(rest[:n])
	}
	return view(rest[:n])
}

// unitLength reads an initial length field (DWARF 5, section 7.4).
func (b *buf) unitLength() (length uint64, dwarf64 bool) {
	l := b.fixed(4)
	if l == 0xffffffff {
		return b.fixed(8), true
	}
	if l >= 0xfffffff0 {
		b.fail(fmt.Errorf("%w: reserved unit length %#x", ErrMalformed, l))
		return 0, false
	}
	return l, false
}

// end checks that a structure of length n starting at the cursor fits in
// the data and returns its end.
func (b *buf) end(n uint64) int {
	if n > uint64(len(b.data)-b.pos) {
		b.fail(fmt.Errorf("%w: length %#x exceeds the %#x bytes left", ErrTruncated, n, len(b.data)-b.pos))
		return b.pos
	}
	return b.pos + int(n)
}
