package dwarfscan

import (
	"encoding/binary"
	"fmt"
	"io"
	"sort"
)

// Sections holds the raw (decompressed, relocated) bytes of the DWARF
// sections. Any may be nil except Info and Abbrev.
type Sections struct {
	Info, Abbrev, Str, LineStr, Line, Ranges, RngLists, Addr, StrOffsets []byte
}

// Data is the decoded unit index of one set of sections. It is immutable
// after New and safe for concurrent use.
type Data struct {
	s     Sections
	units []Unit
}

// Unit describes one unit of .debug_info.
type Unit struct {
	Offset, End uint64 // header start and first byte after the unit
	Version     int
	AddrSize    int
	Dwarf64     bool
	UnitType    uint8  // UT* (UTCompile for DWARF 2-4 units)
	Signature   uint64 // type signature (type units) or DWO id (skeleton and split units)
	TypeOffset  uint64 // type units: absolute offset of the type's entry

	// From the root entry: what ranges, strx, addrx and line programs need.
	CompDir  string
	StmtList int64 // -1 when absent
	LowPC    uint64
	// Bases from DW_AT_str_offsets_base, DW_AT_addr_base (or
	// DW_AT_GNU_addr_base) and DW_AT_rnglists_base. When absent they are
	// 0, except in DWARF 5 split units, where the bases default to just
	// past the section headers (8 and 12 bytes; 16 and 20 in DWARF64).
	StrOffsetsBase, AddrBase, RngListsBase uint64

	// Err is set when the unit's header, abbreviations or root entry
	// cannot be decoded; a Reader returns it for every entry of the unit.
	Err error

	first   uint64 // offset of the root entry
	abbrevs *abbrevTable
	base    uint64 // base address of range lists, as debug/dwarf takes it
}

// New parses all unit headers, abbreviation tables and the root entry of
// every unit. A broken unit chain (a length that runs past the section)
// is an error; a unit that is broken inside (bad version, unknown form in
// its abbreviations, bad root entry) has Unit.Err set and the others stay
// readable, where debug/dwarf's New fails.
func New(s Sections) (*Data, error) {
	return NewBuilder(s).Extend(len(s.Info))
}

// Builder makes Data over a .debug_info that arrives in order, so units can
// be read while the rest of the section is still being decompressed. All
// sections but Info must be complete; Info must have its final length,
// and only its first n bytes are read by Extend(n) and the Data it returns.
type Builder struct {
	s       Sections
	tables  map[abbrevKey]*abbrevTable
	budget  int
	units   []Unit
	pos     int // where the next unit starts
	err     error
	checked bool // the byte order
}

// NewBuilder starts a Builder over s.
func NewBuilder(s Sections) *Builder {
	// Units may point into the middle of other units' tables; real files
	// do not, and without a bound a crafted file could make New scan the
	// section once per unit.
	return &Builder{s: s, tables: map[abbrevKey]*abbrevTable{}, budget: 8*len(s.Abbrev) + 1<<20}
}

// Extend parses the units that lie wholly in the first n bytes of Info
// and returns a Data over every unit parsed so far. Data returned earlier
// stay valid. At n == len(Info) it is what New returns. Not safe for
// concurrent use; the Data it returns are.
func (b *Builder) Extend(n int) (*Data, error) {
	s := b.s
	if !b.checked && len(s.Info) >= 6 && n >= min(len(s.Info), 14) {
		b.checked = true
		// Same test as debug/dwarf: the version's high byte is 0.
		vo := 4
		if binary.LittleEndian.Uint32(s.Info) == 0xffffffff && len(s.Info) >= 14 {
			vo = 12
		}
		if s.Info[vo] == 0 && s.Info[vo+1] != 0 {
			b.err = decodeErr(".debug_info", 0, ErrBigEndian)
		}
	}
	final := n >= len(s.Info)
	n = min(n, len(s.Info))
	for b.err == nil && b.pos < n {
		r := buf{data: s.Info[:n], pos: b.pos, sec: ".debug_info"}
		start := r.pos
		length, dwarf64 := r.unitLength()
		if r.err == nil && length == 0 {
			b.pos = r.pos // padding, as debug/dwarf skips it
			continue
		}
		var end int
		if r.err == nil {
			end = r.end(length)
		}
		if r.err != nil {
			if !final {
				break // the rest of the unit has not arrived yet
			}
			b.err = r.err
			break
		}
		u := Unit{Offset: uint64(start), End: uint64(end), Dwarf64: dwarf64, StmtList: -1}
		d := &Data{s: s}
		d.header(&u, buf{data: s.Info[:end], pos: r.pos, sec: ".debug_info"}, b.tables, &b.budget)
		b.units = append(b.units, u)
		b.pos = end
	}
	if b.err != nil {
		return nil, b.err
	}
	// A capacity-limited slice: later appends never write where this Data reads.
	return &Data{s: s, units: b.units[:len(b.units):len(b.units)]}, nil
}

// header decodes the unit header at b and the unit's root entry.
func (d *Data) header(u *Unit, b buf, tables map[abbrevKey]*abbrevTable, budget *int) {
	offSize := 4
	if u.Dwarf64 {
		offSize = 8
	}
	u.Version = int(b.fixed(2))
	if b.err == nil && (u.Version < 2 || u.Version > 5) {
		u.Err = decodeErr(".debug_info", int(u.Offset), fmt.Errorf("%w: DWARF %d", ErrBadVersion, u.Version))
		return
	}
	var abbrevOff uint64
	u.UnitType = UTCompile
	if u.Version >= 5 {
		u.UnitType = b.u8()
		u.AddrSize = int(b.u8())
		abbrevOff = b.fixed(offSize)
		switch u.UnitType {
		case UTSkeleton, UTSplitCompile:
			u.Signature = b.fixed(8)
		case UTType, UTSplitType:
			u.Signature = b.fixed(8)
			u.TypeOffset = u.Offset + b.fixed(offSize)
		}
	} else {
		abbrevOff = b.fixed(offSize)
		u.AddrSize = int(b.u8())
	}
	if b.err != nil {
		u.Err = b.err
		return
	}
	u.first = uint64(b.pos)
	key := abbrevKey{abbrevOff, u.Version < 4}
	t, ok := tables[key]
	if !ok {
		if *budget < 0 {
			u.Err = decodeErr(".debug_abbrev", clampInt(abbrevOff), fmt.Errorf("%w: abbreviation tables overlap", ErrMalformed))
			return
		}
		var scanned int
		t, scanned = parseAbbrevs(d.s.Abbrev, abbrevOff, u.Version)
		*budget -= scanned
		tables[key] = t
	}
	if t.err != nil {
		u.Err = t.err
		return
	}
	u.abbrevs = t
	if u.Version >= 5 && (u.UnitType == UTSplitCompile || u.UnitType == UTSplitType) {
		u.StrOffsetsBase, u.RngListsBase = 8, 12
		if u.Dwarf64 {
			u.StrOffsetsBase, u.RngListsBase = 16, 20
		}
	}
	d.root(u)
}

// root reads what Unit needs from the unit's root entry. strx and addrx
// values there can only be resolved once the bases are known, so the
// entry is decoded raw first.
func (d *Data) root(u *Unit) {
	r := Reader{d: d, raw: true}
	r.enter(u, u.first)
	var e Entry
	if err := r.Next(&e); err != nil {
		if err != io.EOF {
			u.Err = err
		}
		return
	}
	compDir := -1
	var low, entry *Field
	var addrBase bool
	for i := range e.Fields {
		f := &e.Fields[i]
		offset := f.Class == ClassSecOffset || f.Class == ClassConstant && f.Form != FormData16
		switch f.Attr {
		case AttrCompDir:
			compDir = i
		case AttrLowPC:
			low = f
		case AttrEntryPC:
			entry = f
		case AttrStmtList:
			if offset && int64(f.Val) >= 0 {
				u.StmtList = int64(f.Val)
			}
		case AttrStrOffsetsBase:
			if offset {
				u.StrOffsetsBase = f.Val
			}
		case AttrAddrBase:
			if offset {
				u.AddrBase, addrBase = f.Val, true
			}
		case AttrGNUAddrBase:
			if offset && !addrBase {
				u.AddrBase = f.Val
			}
		case AttrRnglistsBase:
			if offset {
				u.RngListsBase = f.Val
			}
		}
	}
	r.raw = false
	if compDir >= 0 && e.Fields[compDir].Class == ClassString {
		if !e.read(compDir) {
			u.Err = decodeErr(".debug_info", int(u.first), fmt.Errorf("%w: DW_AT_comp_dir", ErrBadOffset))
			return
		}
		u.CompDir = e.Fields[compDir].Str
	}
	for _, f := range []*Field{low, entry} {
		if f != nil && f.Class == ClassAddress {
			if err := r.resolveRaw(f); err != nil {
				u.Err = err
				return
			}
		}
	}
	if low != nil && low.Class == ClassAddress {
		u.LowPC = low.Val
		u.base = low.Val
	}
	// debug/dwarf prefers DW_AT_entry_pc as the base address of range lists.
	if entry != nil && entry.Class == ClassAddress {
		u.base = entry.Val
	}
}

// Units returns the units in .debug_info order. The slice must not be modified.
func (d *Data) Units() []Unit { return d.units }

// UnitOf returns the index of the unit containing .debug_info offset
// off, or -1.
func (d *Data) UnitOf(off uint64) int {
	i := sort.Search(len(d.units), func(i int) bool { return d.units[i].End > off })
	if i < len(d.units) && d.units[i].Offset <= off {
		return i
	}
	return -1
}

type abbrevKey struct {
	off uint64
	old bool // DWARF 2-3 classify data4/data8 differently
}

type attrSpec struct {
	attr  Attr
	form  uint16 // forms are checked to fit
	class Class
	val   int64 // DW_FORM_implicit_const
}

type abbrev struct {
	code     uint64
	tag      Tag
	children bool
	ok       bool  // present in the table
	sibling  int32 // index of DW_AT_sibling in specs, or -1
	specs    []attrSpec
}

// abbrevTable maps codes to abbreviations: a slice indexed by code when
// the codes are dense (they almost always are), else a sorted slice.
type abbrevTable struct {
	dense  []abbrev
	sparse []abbrev
	err    error
}

func (t *abbrevTable) lookup(code uint64) *abbrev {
	if code < uint64(len(t.dense)) {
		if a := &t.dense[code]; a.ok {
			return a
		}
		return nil
	}
	i := sort.Search(len(t.sparse), func(i int) bool { return t.sparse[i].code >= code })
	if i < len(t.sparse) && t.sparse[i].code == code {
		return &t.sparse[i]
	}
	return nil
}

// parseAbbrevs parses the abbreviation table at off. Like debug/dwarf it
// ends the table at the end of the section as well as at a 0 code. A
// first pass counts, so that the second allocates exactly: libjvm has
// 1.8M attribute specifications in 285k abbreviations.
func parseAbbrevs(sec []byte, off uint64, vers int) (t *abbrevTable, scanned int) {
	t = &abbrevTable{}
	if off > uint64(len(sec)) {
		t.err = decodeErr(".debug_abbrev", 0, fmt.Errorf("%w: table offset %#x", ErrBadOffset, off))
		return t, 0
	}
	n, nspecs, maxCode, end, err := scanAbbrevs(sec, int(off))
	scanned = end - int(off)
	if err != nil {
		t.err = err
		return t, scanned
	}
	specs := make([]attrSpec, 0, nspecs)
	var list []abbrev
	dense := maxCode < uint64(2*n+64)
	if dense {
		t.dense = make([]abbrev, maxCode+1)
	} else {
		list = make([]abbrev, 0, n)
	}
	b := buf{data: sec, pos: int(off), sec: ".debug_abbrev"}
	for i := 0; i < n; i++ {
		code := b.uleb()
		a := abbrev{code: code, ok: true, sibling: -1}
		a.tag = Tag(b.uleb())
		a.children = b.u8() != 0
		start := len(specs)
		for {
			at, fpos := b.uleb(), b.pos
			form := b.uleb()
			if at == 0 && form == 0 {
				break
			}
			s := attrSpec{attr: Attr(at), form: uint16(form)}
			c, ok := formClass(Form(form), s.attr, vers)
			if !ok || form > 0xffff {
				t.err = decodeErr(".debug_abbrev", fpos, fmt.Errorf("%w %#x", ErrUnknownForm, form))
				return t, scanned
			}
			s.class = c
			if Form(form) == FormImplicitConst {
				s.val = b.sleb()
			}
			if s.attr == AttrSibling && a.sibling < 0 {
				a.sibling = int32(len(specs) - start)
			}
			specs = append(specs, s)
		}
		a.specs = specs[start:len(specs):len(specs)]
		if dense {
			t.dense[code] = a // a later duplicate wins, as in debug/dwarf
		} else {
			list = append(list, a)
		}
	}
	if dense {
		return t, scanned
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].code < list[j].code })
	for _, a := range list {
		if k := len(t.sparse); k > 0 && t.sparse[k-1].code == a.code {
			t.sparse[k-1] = a
			continue
		}
		t.sparse = append(t.sparse, a)
	}
	return t, scanned
}

// scanAbbrevs checks the structure of the table at pos and counts its
// abbreviations and attribute specifications.
func scanAbbrevs(sec []byte, pos int) (n, specs int, maxCode uint64, end int, err error) {
	b := buf{data: sec, pos: pos, sec: ".debug_abbrev"}
	for b.pos < len(b.data) {
		code := b.uleb()
		if code == 0 || b.err != nil {
			break
		}
		b.uleb()
		b.u8()
		for b.err == nil {
			at, form := b.uleb(), b.uleb()
			if at == 0 && form == 0 {
				break
			}
			if Form(form) == FormImplicitConst {
				b.sleb()
			}
			specs++
		}
		n++
		maxCode = max(maxCode, code)
	}
	return n, specs, maxCode, b.pos, b.err
}
