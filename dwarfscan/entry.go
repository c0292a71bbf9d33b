package dwarfscan

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"unsafe"
)

// Field is one attribute of an entry. Class tells how Val and Str are
// meant (see the Class constants).
type Field struct {
	Attr  Attr
	Form  Form // after DW_FORM_indirect is resolved
	Class Class
	Val   uint64
	Str   string
}

// Entry is one debugging information entry. A null entry (the end of a
// sibling list) has Tag 0.
type Entry struct {
	Offset   uint64
	Tag      Tag
	Children bool
	Fields   []Field // storage reused by the next Reader.Next into this Entry
}

// Field returns the attribute a of e.
func (e *Entry) Field(a Attr) (Field, bool) {
	for i := range e.Fields {
		if e.Fields[i].Attr == a {
			return e.Fields[i], true
		}
	}
	return Field{}, false
}

func (e *Entry) find(a Attr, c Class) *Field {
	for i := range e.Fields {
		if f := &e.Fields[i]; f.Attr == a {
			if f.Class == c {
				return f
			}
			return nil
		}
	}
	return nil
}

// String returns the value of a string-class attribute a.
func (e *Entry) String(a Attr) (string, bool) {
	if f := e.find(a, ClassString); f != nil {
		return f.Str, true
	}
	return "", false
}

// Int returns the value of a constant-class attribute a (the low 64 bits
// for data16).
func (e *Entry) Int(a Attr) (int64, bool) {
	if f := e.find(a, ClassConstant); f != nil {
		return int64(f.Val), true
	}
	return 0, false
}

// Ref returns the absolute .debug_info offset that reference attribute a
// points to.
func (e *Entry) Ref(a Attr) (uint64, bool) {
	if f := e.find(a, ClassReference); f != nil {
		return f.Val, true
	}
	return 0, false
}

// Flag reports whether flag attribute a is present and set.
func (e *Entry) Flag(a Attr) bool {
	f := e.find(a, ClassFlag)
	return f != nil && f.Val != 0
}

// Addr returns the value of address-class attribute a.
func (e *Entry) Addr(a Attr) (uint64, bool) {
	if f := e.find(a, ClassAddress); f != nil {
		return f.Val, true
	}
	return 0, false
}

// Reader walks the entries of one unit at a time. It is not safe for
// concurrent use; make one per goroutine.
type Reader struct {
	d    *Data
	u    *Unit
	info []byte // .debug_info cut at the unit's end
	pos  int
	err  error
	raw  bool // leave strx and addrx unresolved (root entries in New)

	lastChildren bool
	lastRoot     bool
	lastSibling  uint64 // 0: none
}

// Reader returns a Reader positioned at the root entry of the first unit.
func (d *Data) Reader() *Reader {
	r := &Reader{d: d}
	if len(d.units) > 0 {
		r.SeekUnit(0)
	}
	return r
}

func (r *Reader) enter(u *Unit, off uint64) {
	r.u = u
	r.info = r.d.s.Info[:u.End]
	r.pos = int(off)
	r.err = u.Err
	r.lastChildren = false
}

// SeekUnit positions r at the root entry of unit i.
func (r *Reader) SeekUnit(i int) {
	if i < 0 || i >= len(r.d.units) {
		r.u, r.info, r.pos = nil, nil, 0
		r.err = fmt.Errorf("dwarfscan: %w: %d of %d", errNoUnit, i, len(r.d.units))
		return
	}
	u := &r.d.units[i]
	r.enter(u, u.first)
}

// Seek positions r at the entry at .debug_info offset off, in any unit.
func (r *Reader) Seek(off uint64) error {
	i := r.d.UnitOf(off)
	if i < 0 {
		r.err = &DecodeError{".debug_info", off, ErrBadOffset}
		return r.err
	}
	u := &r.d.units[i]
	if u.Err == nil && off < u.first {
		r.err = &DecodeError{".debug_info", off, errBeforeHeader}
		return r.err
	}
	r.enter(u, off)
	return r.err
}

// Unit returns the unit r is in.
func (r *Reader) Unit() *Unit { return r.u }

func (r *Reader) fail(off int, err error) error {
	r.err = decodeErr(".debug_info", off, err)
	return r.err
}

// Next decodes the next entry into e. It returns io.EOF after the last
// entry of the current unit.
func (r *Reader) Next(e *Entry) error {
	if r.err != nil {
		return r.err
	}
	b := r.info
	pos := r.pos
	r.lastChildren = false
	if pos >= len(b) {
		return io.EOF
	}
	off := pos
	var code uint64
	if c := b[pos]; c < 0x80 {
		code = uint64(c)
		pos++
	} else {
		var ok bool
		if code, pos, ok = uleb(b, pos); !ok {
			return r.fail(off, ErrTruncated)
		}
	}
	e.Offset = uint64(off)
	if code == 0 {
		e.Tag, e.Children, e.Fields = 0, false, e.Fields[:0]
		r.pos = pos
		return nil
	}
	var a *abbrev
	if t := r.u.abbrevs; code < uint64(len(t.dense)) && t.dense[code].ok {
		a = &t.dense[code]
	} else if a = t.lookup(code); a == nil {
		return r.fail(off, fmt.Errorf("%w: %d", ErrUnknownCode, code))
	}
	fields := e.Fields
	if n := len(a.specs); cap(fields) < n {
		fields = make([]Field, n, n+8)
	} else {
		fields = fields[:n]
	}
	pos, err := r.fields(a, fields, pos)
	if err != nil {
		r.err = err
		return err
	}
	e.Tag, e.Children, e.Fields = a.tag, a.children, fields
	r.pos = pos
	r.lastChildren = a.children
	r.lastRoot = uint64(off) == r.u.first
	r.lastSibling = 0
	if a.sibling >= 0 && fields[a.sibling].Class == ClassReference {
		r.lastSibling = fields[a.sibling].Val
	}
	return nil
}

// fields decodes the attribute values of an entry with abbreviation a
// starting at pos, and returns the position after them.
func (r *Reader) fields(a *abbrev, fields []Field, pos int) (int, error) {
	b := r.info
	u := r.u
	offSize := 4
	if u.Dwarf64 {
		offSize = 8
	}
	for i := range a.specs {
		sp := &a.specs[i]
		f := &fields[i]
		f.Attr, f.Form, f.Class, f.Str = sp.attr, Form(sp.form), sp.class, ""
		form := Form(sp.form)
		start := pos
		if form == FormIndirect {
			v, next, ok := uleb(b, pos)
			if !ok {
				return 0, decodeErr(".debug_info", pos, ErrTruncated)
			}
			c, known := formClass(Form(v), sp.attr, u.Version)
			if !known || v > 0xffff || Form(v) == FormIndirect || Form(v) == FormImplicitConst {
				return 0, decodeErr(".debug_info", pos, fmt.Errorf("%w %#x after DW_FORM_indirect", ErrUnknownForm, v))
			}
			pos, form = next, Form(v)
			f.Form, f.Class = form, c
		}
		var v uint64
		var n int // bytes of a fixed-size value, 0 for the others
		switch form {
		case FormData1, FormRef1, FormFlag, FormStrx1, FormAddrx1:
			n = 1
		case FormData2, FormRef2, FormStrx2, FormAddrx2:
			n = 2
		case FormStrx3, FormAddrx3:
			n = 3
		case FormData4, FormRef4, FormStrx4, FormAddrx4, FormRefSup4:
			n = 4
		case FormData8, FormRef8, FormRefSig8, FormRefSup8:
			n = 8
		case FormStrp, FormLineStrp, FormSecOffset, FormStrpSup, FormGNURefAlt, FormGNUStrpAlt:
			n = offSize
		case FormRefAddr:
			n = offSize
			if u.Version == 2 {
				n = u.AddrSize
			}
		case FormAddr:
			n = u.AddrSize
			if n != 1 && n != 2 && n != 4 && n != 8 {
				return 0, decodeErr(".debug_info", pos, fmt.Errorf("%w: %d", ErrAddressSize, n))
			}
		case FormUdata, FormRefUdata, FormStrx, FormAddrx, FormLoclistx, FormRnglistx,
			FormGNUAddrIndex, FormGNUStrIndex:
			x, next, ok := uleb(b, pos)
			if !ok {
				return 0, decodeErr(".debug_info", pos, ErrTruncated)
			}
			v, pos = x, next
		case FormSdata:
			x, next, ok := sleb(b, pos)
			if !ok {
				return 0, decodeErr(".debug_info", pos, ErrTruncated)
			}
			v, pos = uint64(x), next
		case FormImplicitConst:
			v = uint64(sp.val)
		case FormFlagPresent:
			v = 1
		case FormString:
			k := bytes.IndexByte(b[pos:], 0)
			if k < 0 {
				return 0, decodeErr(".debug_info", pos, ErrTruncated)
			}
			f.Str = string(b[pos : pos+k]) // copied: must not pin .debug_info
			pos += k + 1
		case FormData16:
			if len(b)-pos < 16 {
				return 0, decodeErr(".debug_info", pos, ErrTruncated)
			}
			v = binary.LittleEndian.Uint64(b[pos:])
			f.Str = view(b[pos : pos+16])
			pos += 16
		case FormBlock1, FormBlock2, FormBlock4, FormBlock, FormExprloc:
			var size uint64
			var ok bool
			switch form {
			case FormBlock1:
				size, ok = fixed(b, pos, 1)
				pos++
			case FormBlock2:
				size, ok = fixed(b, pos, 2)
				pos += 2
			case FormBlock4:
				size, ok = fixed(b, pos, 4)
				pos += 4
			default:
				size, pos, ok = uleb(b, pos)
			}
			if !ok || size > uint64(len(b)-pos) {
				return 0, decodeErr(".debug_info", start, ErrTruncated)
			}
			v = uint64(pos)
			f.Str = view(b[pos : pos+int(size)])
			pos += int(size)
		default:
			return 0, decodeErr(".debug_info", start, fmt.Errorf("%w %#x", ErrUnknownForm, uint32(form)))
		}
		if n > 0 {
			if n > len(b)-pos {
				return 0, decodeErr(".debug_info", pos, ErrTruncated)
			}
			// Inlined fixed(): this is the hottest spot of a walk.
			switch n {
			case 1:
				v = uint64(b[pos])
			case 2:
				v = uint64(binary.LittleEndian.Uint16(b[pos:]))
			case 4:
				v = uint64(binary.LittleEndian.Uint32(b[pos:]))
			case 8:
				v = binary.LittleEndian.Uint64(b[pos:])
			default:
				v, _ = fixed(b, pos, n)
			}
			pos += n
		}
		switch form {
		case FormRef1, FormRef2, FormRef4, FormRef8, FormRefUdata:
			v += u.Offset
		case FormFlag:
			if v != 0 {
				v = 1
			}
		case FormStrp:
			str := r.d.s.Str
			k := -1
			if v < uint64(len(str)) {
				k = bytes.IndexByte(str[v:], 0)
			}
			if k < 0 {
				return 0, decodeErr(".debug_info", start, fmt.Errorf("%w: .debug_str offset %#x", ErrBadOffset, v))
			}
			if k > 0 {
				f.Str = unsafe.String(&str[v], k)
			}
		case FormLineStrp:
			s, ok := cstr(r.d.s.LineStr, v)
			if !ok {
				return 0, decodeErr(".debug_info", start, fmt.Errorf("%w: .debug_line_str offset %#x", ErrBadOffset, v))
			}
			f.Str = s
		case FormStrx, FormStrx1, FormStrx2, FormStrx3, FormStrx4, FormGNUStrIndex:
			if !r.raw {
				s, err := r.d.strx(u, v)
				if err != nil {
					return 0, decodeErr(".debug_info", start, err)
				}
				f.Str = s
			}
		case FormAddrx, FormAddrx1, FormAddrx2, FormAddrx3, FormAddrx4, FormGNUAddrIndex:
			if !r.raw {
				x, err := r.d.addrx(u, v)
				if err != nil {
					return 0, decodeErr(".debug_info", start, err)
				}
				v = x
			}
		}
		f.Val = v
	}
	return pos, nil
}

// resolveRaw resolves a strx or addrx field decoded in raw mode.
func (r *Reader) resolveRaw(f *Field) error {
	var err error
	switch f.Form {
	case FormStrx, FormStrx1, FormStrx2, FormStrx3, FormStrx4, FormGNUStrIndex:
		f.Str, err = r.d.strx(r.u, f.Val)
	case FormAddrx, FormAddrx1, FormAddrx2, FormAddrx3, FormAddrx4, FormGNUAddrIndex:
		f.Val, err = r.d.addrx(r.u, f.Val)
	}
	if err != nil {
		return decodeErr(".debug_info", int(r.u.first), err)
	}
	return nil
}

// strx returns string number i of unit u's .debug_str_offsets contribution.
func (d *Data) strx(u *Unit, i uint64) (string, error) {
	size := uint64(4)
	if u.Dwarf64 {
		size = 8
	}
	sec := d.s.StrOffsets
	if sec == nil {
		return "", fmt.Errorf("%w: .debug_str_offsets for string index %d", ErrNoSection, i)
	}
	if i > math.MaxUint64/size || u.StrOffsetsBase > math.MaxUint64-i*size {
		return "", fmt.Errorf("%w: string index %d", ErrBadOffset, i)
	}
	off, ok := fixed(sec, clampInt(u.StrOffsetsBase+i*size), int(size))
	if !ok {
		return "", fmt.Errorf("%w: string index %d beyond .debug_str_offsets", ErrBadOffset, i)
	}
	s, ok := cstr(d.s.Str, off)
	if !ok {
		return "", fmt.Errorf("%w: .debug_str offset %#x of string index %d", ErrBadOffset, off, i)
	}
	return s, nil
}

// addrx returns address number i of unit u's .debug_addr contribution.
func (d *Data) addrx(u *Unit, i uint64) (uint64, error) {
	size := uint64(u.AddrSize)
	if size != 1 && size != 2 && size != 4 && size != 8 {
		return 0, fmt.Errorf("%w: %d", ErrAddressSize, size)
	}
	sec := d.s.Addr
	if sec == nil {
		return 0, fmt.Errorf("%w: .debug_addr for address index %d", ErrNoSection, i)
	}
	if i > math.MaxUint64/size || u.AddrBase > math.MaxUint64-i*size {
		return 0, fmt.Errorf("%w: address index %d", ErrBadOffset, i)
	}
	v, ok := fixed(sec, clampInt(u.AddrBase+i*size), int(size))
	if !ok {
		return 0, fmt.Errorf("%w: address index %d beyond .debug_addr", ErrBadOffset, i)
	}
	return v, nil
}

// clampInt converts an offset to int, mapping values that do not fit to
// -1 so that bounds checks fail.
func clampInt(v uint64) int {
	if v > math.MaxInt {
		return -1
	}
	return int(v)
}

// SkipChildren skips the children of the entry Next returned last, if it
// has any: by its DW_AT_sibling when that points forward within the unit,
// else by decoding past them.
func (r *Reader) SkipChildren() {
	if r.err != nil || !r.lastChildren {
		return
	}
	r.lastChildren = false
	if r.lastRoot {
		r.pos = len(r.info)
		return
	}
	if s := r.lastSibling; s >= uint64(r.pos) && s <= uint64(len(r.info)) {
		r.pos = int(s)
		return
	}
	for depth := 1; depth > 0 && r.pos < len(r.info); {
		null, children, err := r.skipEntry()
		if err != nil {
			r.err = err
			return
		}
		if null {
			depth--
		} else if children {
			depth++
		}
	}
}

// skipEntry moves past one entry without decoding its values.
func (r *Reader) skipEntry() (null, children bool, err error) {
	b := r.info
	off := r.pos
	code, pos, ok := uleb(b, off)
	if !ok {
		return false, false, decodeErr(".debug_info", off, ErrTruncated)
	}
	if code == 0 {
		r.pos = pos
		return true, false, nil
	}
	a := r.u.abbrevs.lookup(code)
	if a == nil {
		return false, false, decodeErr(".debug_info", off, fmt.Errorf("%w: %d", ErrUnknownCode, code))
	}
	for i := range a.specs {
		form := Form(a.specs[i].form)
		if form == FormIndirect {
			v, next, ok := uleb(b, pos)
			if !ok {
				return false, false, decodeErr(".debug_info", pos, ErrTruncated)
			}
			pos, form = next, Form(v)
			if v > 0xffff || form == FormIndirect {
				return false, false, decodeErr(".debug_info", pos, fmt.Errorf("%w %#x after DW_FORM_indirect", ErrUnknownForm, v))
			}
		}
		next, ok := r.skipForm(form, pos)
		if !ok {
			return false, false, decodeErr(".debug_info", pos, fmt.Errorf("%w or %w %#x", ErrTruncated, ErrUnknownForm, uint32(form)))
		}
		pos = next
	}
	r.pos = pos
	return false, a.children, nil
}

// skipForm returns the position after a value of the given form at pos.
func (r *Reader) skipForm(form Form, pos int) (int, bool) {
	b := r.info
	u := r.u
	offSize := 4
	if u.Dwarf64 {
		offSize = 8
	}
	n := 0
	switch form {
	case FormData1, FormRef1, FormFlag, FormStrx1, FormAddrx1:
		n = 1
	case FormData2, FormRef2, FormStrx2, FormAddrx2:
		n = 2
	case FormStrx3, FormAddrx3:
		n = 3
	case FormData4, FormRef4, FormStrx4, FormAddrx4, FormRefSup4:
		n = 4
	case FormData8, FormRef8, FormRefSig8, FormRefSup8:
		n = 8
	case FormData16:
		n = 16
	case FormStrp, FormLineStrp, FormSecOffset, FormStrpSup, FormGNURefAlt, FormGNUStrpAlt:
		n = offSize
	case FormRefAddr:
		n = offSize
		if u.Version == 2 {
			n = u.AddrSize
		}
	case FormAddr:
		n = u.AddrSize
	case FormUdata, FormRefUdata, FormStrx, FormAddrx, FormLoclistx, FormRnglistx,
		FormGNUAddrIndex, FormGNUStrIndex, FormSdata:
		_, next, ok := uleb(b, pos)
		return next, ok
	case FormImplicitConst, FormFlagPresent:
		return pos, true
	case FormString:
		k := bytes.IndexByte(b[pos:], 0)
		return pos + k + 1, k >= 0
	case FormBlock1, FormBlock2, FormBlock4, FormBlock, FormExprloc:
		var size uint64
		var ok bool
		switch form {
		case FormBlock1:
			size, ok = fixed(b, pos, 1)
			pos++
		case FormBlock2:
			size, ok = fixed(b, pos, 2)
			pos += 2
		case FormBlock4:
			size, ok = fixed(b, pos, 4)
			pos += 4
		default:
			size, pos, ok = uleb(b, pos)
		}
		if !ok || size > uint64(len(b)-pos) {
			return 0, false
		}
		return pos + int(size), true
	default:
		return 0, false
	}
	if n > len(b)-pos {
		return 0, false
	}
	return pos + n, true
}
