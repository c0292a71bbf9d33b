package dwarfscan

import (
	"fmt"
	"io"
)

// Field is one attribute of an entry. Class tells how Val and Str are
// meant (see the Class constants). For strings Val is the raw form value
// (the .debug_str offset or the string index), for blocks the offset of
// the bytes in .debug_info.
type Field struct {
	Attr  Attr
	Form  Form // after DW_FORM_indirect is resolved
	Class Class
	Val   uint64
	// Str holds strings, data16 and block bytes. Strings in .debug_str and
	// .debug_line_str (directly or through .debug_str_offsets) are read
	// only when asked for, by Entry.String or Entry.Field: Str is empty in
	// Entry.Fields until then.
	Str string
}

// Entry is one debugging information entry. A null entry (the end of a
// sibling list) has Tag 0.
type Entry struct {
	Offset   uint64
	Tag      Tag
	Children bool
	Fields   []Field // storage reused by the next Reader.Next into this Entry

	d    *Data // where lazy strings are read
	u    *Unit
	lazy uint64 // fields (by index) whose string is not read yet
}

// Field returns the attribute a of e, a string read if need be.
func (e *Entry) Field(a Attr) (Field, bool) {
	for i := range e.Fields {
		if f := &e.Fields[i]; f.Attr == a {
			e.read(i)
			return *f, true
		}
	}
	return Field{}, false
}

// read reads field i's string if it is lazy; false when its offset lies
// outside the string section (Str is then empty).
func (e *Entry) read(i int) bool {
	if i >= 64 || e.lazy&(1<<i) == 0 {
		return true
	}
	e.lazy &^= 1 << i
	s, err := e.d.str(e.u, &e.Fields[i])
	e.Fields[i].Str = s
	return err == nil
}

func (e *Entry) find(a Attr, c Class) *Field {
	i := e.index(a, c)
	if i < 0 {
		return nil
	}
	return &e.Fields[i]
}

func (e *Entry) index(a Attr, c Class) int {
	for i := range e.Fields {
		if f := &e.Fields[i]; f.Attr == a {
			if f.Class == c {
				return i
			}
			return -1
		}
	}
	return -1
}

// String returns the value of a string-class attribute a; false also when
// its offset lies outside the string section.
func (e *Entry) String(a Attr) (string, bool) {
	if i := e.index(a, ClassString); i >= 0 && e.read(i) {
		return e.Fields[i].Str, true
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
// concurrent use; make one per goroutine. An unknown form, a truncated
// value or an abbreviation code missing from the table is an error for
// the rest of that unit only.
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
// entry of the current unit (debug/dwarf's Reader goes on into the next
// unit; here SeekUnit does that, so that units can be shared out among
// goroutines). A null entry keeps its real offset (debug/dwarf gives 0).
// After an error, Next returns the same error until the next Seek.
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
		e.Tag, e.Children, e.Fields, e.lazy = 0, false, e.Fields[:0], 0
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
	pos, lazy, err := r.fields(a, fields, pos)
	if err != nil {
		r.err = err
		return err
	}
	e.Tag, e.Children, e.Fields = a.tag, a.children, fields
	e.d, e.u, e.lazy = r.d, r.u, lazy
	r.pos = pos
	r.lastChildren = a.children
	r.lastRoot = uint64(off) == r.u.first
	r.lastSibling = 0
	if a.sibling >= 0 && fields[a.sibling].Class == ClassReference {
		r.lastSibling = fields[a.sibling].Val
	}
	return nil
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
