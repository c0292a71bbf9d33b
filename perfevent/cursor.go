package perfevent

import (
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"
)

// cursor reads the fields of one record's body in order. The first
// field that does not fit sets err, naming the field and its offset in
// the record (header included), and later reads return zeros.
type cursor struct {
	b   []byte
	off int // bytes of b consumed
	err error
}

// headerSize is the size of a record's header: offsets in errors count
// from the record's start.
const headerSize = 8

func (c *cursor) fail(what string, n uint64, unit string) {
	if c.err == nil {
		c.err = fmt.Errorf("%s (%d %s) at byte %d runs past the record's end at byte %d", what, n, unit, c.off+headerSize, len(c.b)+headerSize)
	}
}

// bytes takes n bytes.
func (c *cursor) bytes(what string, n uint64) []byte {
	if c.err != nil {
		return nil
	}
	if n > uint64(len(c.b)-c.off) {
		c.fail(what, n, "bytes")
		return nil
	}
	v := c.b[c.off : c.off+int(n)]
	c.off += int(n)
	return v
}

func (c *cursor) u64(what string) uint64 {
	if b := c.bytes(what, 8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (c *cursor) u32(what string) uint32 {
	if b := c.bytes(what, 4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

// u64s appends n words to dst; n is checked against the bytes left
// before anything is allocated.
func (c *cursor) u64s(dst []uint64, what string, n uint64) []uint64 {
	if c.err != nil {
		return dst
	}
	if n > uint64(len(c.b)-c.off)/8 {
		c.fail(what, n, "words")
		return dst
	}
	if n == 0 {
		return dst
	}
	src := c.b[c.off : c.off+int(8*n)]
	c.off += len(src)
	k := len(dst)
	dst = slices.Grow(dst, int(n))[:k+int(n)]
	if littleEndian {
		// The words as they lie: a callchain is most of a frame-pointer
		// sample, and word by word was a tenth of decoding one.
		copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst[k:]))), len(src)), src)
		return dst
	}
	for i := range dst[k:] {
		dst[k+i] = binary.LittleEndian.Uint64(src[8*i:])
	}
	return dst
}

// littleEndian: this machine's words are the files' byte order.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// peekCount reads the count word that starts a variable-length field,
// without consuming it, and checks that count entries of words each can
// fit in what is left.
func (c *cursor) peekCount(what string, words uint64) (uint64, bool) {
	if c.err != nil {
		return 0, false
	}
	left := uint64(len(c.b) - c.off)
	if left < 8 {
		c.fail(what+" count", 8, "bytes")
		return 0, false
	}
	n := binary.LittleEndian.Uint64(c.b[c.off:])
	if n > left/8/words {
		c.fail(what, n, "entries")
		return 0, false
	}
	return n, true
}

// rest is what is left.
func (c *cursor) rest() []byte { return c.b[c.off:] }

// cstring reads a NUL-terminated string from b (all of b without a NUL).
func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
