package dwarfscan

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// fields decodes the attribute values of an entry with abbreviation a
// starting at pos, and returns the position after them and which fields
// hold strings still to be read (Entry.read).
func (r *Reader) fields(a *abbrev, fields []Field, pos int) (int, uint64, error) {
	var lazy uint64
	b := r.info
	u := r.u
	offSize := 4
	if u.Dwarf64 {
		offSize = 8
	}
	var err error
	for i := range a.specs {
		sp := &a.specs[i]
		f := &fields[i]
		f.Attr, f.Form, f.Class, f.Str = sp.attr, Form(sp.form), sp.class, ""
		form := Form(sp.form)
		start := pos
		if form == FormIndirect {
			v, next, ok := uleb(b, pos)
			if !ok {
				return 0, 0, decodeErr(".debug_info", pos, ErrTruncated)
			}
			c, known := formClass(Form(v), sp.attr, u.Version)
			if !known || v > 0xffff || Form(v) == FormIndirect || Form(v) == FormImplicitConst {
				return 0, 0, decodeErr(".debug_info", pos, fmt.Errorf("%w %#x after DW_FORM_indirect", ErrUnknownForm, v))
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
				return 0, 0, decodeErr(".debug_info", pos, fmt.Errorf("%w: %d", ErrAddressSize, n))
			}
		case FormUdata, FormRefUdata, FormStrx, FormAddrx, FormLoclistx, FormRnglistx,
			FormGNUAddrIndex, FormGNUStrIndex:
			x, next, ok := uleb(b, pos)
			if !ok {
				return 0, 0, decodeErr(".debug_info", pos, ErrTruncated)
			}
			v, pos = x, next
		case FormSdata:
			x, next, ok := sleb(b, pos)
			if !ok {
				return 0, 0, decodeErr(".debug_info", pos, ErrTruncated)
			}
			v, pos = uint64(x), next
		case FormImplicitConst:
			v = uint64(sp.val)
		case FormFlagPresent:
			v = 1
		case FormString:
			k := bytes.IndexByte(b[pos:], 0)
			if k < 0 {
				return 0, 0, decodeErr(".debug_info", pos, ErrTruncated)
			}
			f.Str = string(b[pos : pos+k]) // copied: must not pin .debug_info
			pos += k + 1
		case FormData16:
			if len(b)-pos < 16 {
				return 0, 0, decodeErr(".debug_info", pos, ErrTruncated)
			}
			v = binary.LittleEndian.Uint64(b[pos:])
			f.Str = view(b[pos : pos+16])
			pos += 16
		case FormBlock1, FormBlock2, FormBlock4, FormBlock, FormExprloc:
			size, next, ok := blockSize(b, pos, form)
			if !ok {
				return 0, 0, decodeErr(".debug_info", start, ErrTruncated)
			}
			pos = next
			v = uint64(pos)
			f.Str = view(b[pos : pos+int(size)])
			pos += int(size)
		default:
			return 0, 0, decodeErr(".debug_info", start, fmt.Errorf("%w %#x", ErrUnknownForm, uint32(form)))
		}
		if n > 0 {
			if n > len(b)-pos {
				return 0, 0, decodeErr(".debug_info", pos, ErrTruncated)
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
		case FormStrp, FormLineStrp, FormStrx, FormStrx1, FormStrx2, FormStrx3, FormStrx4, FormGNUStrIndex:
			// Read when asked for (Entry.String): finding the end of every
			// name of every entry, types included, was a fifth of a walk.
			if i < 64 {
				lazy |= 1 << i
			} else if f.Str, err = r.d.str(u, f); err != nil {
				return 0, 0, decodeErr(".debug_info", start, err)
			}
		case FormAddrx, FormAddrx1, FormAddrx2, FormAddrx3, FormAddrx4, FormGNUAddrIndex:
			if !r.raw {
				x, err := r.d.addrx(u, v)
				if err != nil {
					return 0, 0, decodeErr(".debug_info", start, err)
				}
				v = x
			}
		}
		f.Val = v
	}
	return pos, lazy, nil
}

// resolveRaw resolves an addrx field decoded in raw mode.
func (r *Reader) resolveRaw(f *Field) error {
	var err error
	switch f.Form {
	case FormAddrx, FormAddrx1, FormAddrx2, FormAddrx3, FormAddrx4, FormGNUAddrIndex:
		f.Val, err = r.d.addrx(r.u, f.Val)
	}
	if err != nil {
		return decodeErr(".debug_info", int(r.u.first), err)
	}
	return nil
}

// str reads the string a lazy field refers to.
func (d *Data) str(u *Unit, f *Field) (string, error) {
	switch f.Form {
	case FormStrp:
		if s, ok := cstr(d.s.Str, f.Val); ok {
			return s, nil
		}
		return "", fmt.Errorf("%w: .debug_str offset %#x", ErrBadOffset, f.Val)
	case FormLineStrp:
		if s, ok := cstr(d.s.LineStr, f.Val); ok {
			return s, nil
		}
		return "", fmt.Errorf("%w: .debug_line_str offset %#x", ErrBadOffset, f.Val)
	}
	return d.strx(u, f.Val)
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
// Its table of fixed sizes repeats the one in fields on purpose: that is
// the hottest loop of a walk (a hundred million values on libjvm), where a
// call per value costs more than the repetition.
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
		size, next, ok := blockSize(b, pos, form)
		return next + int(size), ok
	default:
		return 0, false
	}
	if n > len(b)-pos {
		return 0, false
	}
	return pos + n, true
}

// blockSize reads the length of a block at pos and returns it with the
// position of the block's bytes; ok is false when the length or the block
// runs past b.
func blockSize(b []byte, pos int, form Form) (size uint64, next int, ok bool) {
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
		return 0, pos, false
	}
	return size, pos, true
}
