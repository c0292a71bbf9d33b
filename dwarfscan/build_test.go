package dwarfscan

import "encoding/binary"

// wbuf builds little-endian DWARF bytes for hand-made test inputs.
type wbuf []byte

func (w *wbuf) u8(v ...byte)         { *w = append(*w, v...) }
func (w *wbuf) u16(v uint16)         { *w = binary.LittleEndian.AppendUint16(*w, v) }
func (w *wbuf) u32(v uint32)         { *w = binary.LittleEndian.AppendUint32(*w, v) }
func (w *wbuf) u64(v uint64)         { *w = binary.LittleEndian.AppendUint64(*w, v) }
func (w *wbuf) str(s string)         { *w = append(append(*w, s...), 0) }
func (w *wbuf) bytes(b []byte)       { *w = append(*w, b...) }
func (w *wbuf) uleb(v uint64)        { *w = appendULEB(*w, v) }
func (w *wbuf) sleb(v int64)         { *w = appendSLEB(*w, v) }
func (w *wbuf) off() uint32          { return uint32(len(*w)) }
func (w *wbuf) patch32(at, v uint32) { binary.LittleEndian.PutUint32((*w)[at:], v) }

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			c |= 0x80
		}
		b = append(b, c)
		if v == 0 {
			return b
		}
	}
}

func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		done := v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0
		if !done {
			c |= 0x80
		}
		b = append(b, c)
		if done {
			return b
		}
	}
}

// spec is one attribute specification of a test abbreviation; val is
// the DW_FORM_implicit_const value.
type spec struct {
	attr Attr
	form Form
	val  int64
}

type abbr struct {
	code     uint64
	tag      Tag
	children bool
	specs    []spec
}

// abbrevTableBytes encodes one abbreviation table.
func abbrevTableBytes(as ...abbr) []byte {
	var w wbuf
	for _, a := range as {
		w.uleb(a.code)
		w.uleb(uint64(a.tag))
		if a.children {
			w.u8(1)
		} else {
			w.u8(0)
		}
		for _, s := range a.specs {
			w.uleb(uint64(s.attr))
			w.uleb(uint64(s.form))
			if s.form == FormImplicitConst {
				w.sleb(s.val)
			}
		}
		w.u8(0, 0)
	}
	w.u8(0)
	return w
}

// unitV4 wraps body (the entries) in a 32-bit DWARF 2-4 unit header
// with address size 8 and abbreviations at offset 0.
func unitV4(version uint16, body []byte) []byte { return unitV4At(version, 0, body) }

// unitV4At is unitV4 with the abbreviations at abbrevOff.
func unitV4At(version uint16, abbrevOff uint32, body []byte) []byte {
	var w wbuf
	w.u32(uint32(2 + 4 + 1 + len(body)))
	w.u16(version)
	w.u32(abbrevOff)
	w.u8(8)
	w.bytes(body)
	return w
}

// unitV5 wraps body in a 32-bit DWARF 5 compile unit header.
func unitV5(body []byte) []byte {
	var w wbuf
	w.u32(uint32(2 + 1 + 1 + 4 + len(body)))
	w.u16(5)
	w.u8(UTCompile, 8)
	w.u32(0)
	w.bytes(body)
	return w
}

// lineUnit is a DWARF 2-4 line program unit of the version: its length,
// version, header length, the header h and the opcodes ops.
func lineUnit(version uint16, h, ops wbuf) wbuf {
	var w wbuf
	w.u32(uint32(2 + 4 + len(h) + len(ops)))
	w.u16(version)
	w.u32(uint32(len(h)))
	w.bytes(h)
	w.bytes(ops)
	return w
}
