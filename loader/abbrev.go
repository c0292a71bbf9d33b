package loader

import (
	"debug/dwarf"
	"encoding/binary"
	"sort"
)

// abbrevQuirks finds inlined-subroutine entries whose DW_AT_call_file uses
// DW_FORM_implicit_const. debug/dwarf hides forms, and hpcstruct's Dyninst
// does not read that form, so to reproduce its output we must know which
// entries use it. It parses only unit headers and abbreviation tables.
type abbrevQuirks struct {
	info  []byte
	units []unitAbbrevs // sorted by start
}

type unitAbbrevs struct {
	start, end uint64
	first      uint64          // offset of the unit's root entry
	implicit   map[uint64]bool // abbrev codes of inlined subroutines with implicit_const call_file
}

const (
	formImplicitConst = 0x21
	tagInlined        = 0x1d
	atCallFile        = 0x58
)

func newAbbrevQuirks(info, abbr []byte) *abbrevQuirks {
	q := &abbrevQuirks{}
	if info == nil || abbr == nil {
		return q
	}
	q.info = info
	cache := map[uint64]map[uint64]bool{}
	for off := uint64(0); off+11 <= uint64(len(info)); {
		length := uint64(binary.LittleEndian.Uint32(info[off:]))
		hdr, offSize := uint64(4), uint64(4)
		if length == 0xffffffff {
			if off+12 > uint64(len(info)) {
				break
			}
			length, hdr, offSize = binary.LittleEndian.Uint64(info[off+4:]), 12, 8
		}
		end := off + hdr + length
		if length == 0 || end > uint64(len(info)) || end < off {
			break
		}
		p := off + hdr
		version := binary.LittleEndian.Uint16(info[p:])
		p += 2
		if version >= 5 {
			p += 2 // unit_type, address_size
		}
		if p+offSize > end {
			break
		}
		var aoff uint64
		if offSize == 8 {
			aoff = binary.LittleEndian.Uint64(info[p:])
		} else {
			aoff = uint64(binary.LittleEndian.Uint32(info[p:]))
		}
		m, ok := cache[aoff]
		if !ok {
			m = implicitCallFile(abbr, aoff)
			cache[aoff] = m
		}
		first := p + offSize + 1 // abbreviation offset, address size (v2-4)
		if version >= 5 {
			first = p + offSize
			if t := info[off+hdr+2]; t == 2 || t == 6 { // DW_UT_type, DW_UT_split_type
				first += 8 + offSize
			} else if t == 4 || t == 5 { // DW_UT_skeleton, DW_UT_split_compile
				first += 8
			}
		}
		q.units = append(q.units, unitAbbrevs{start: off, end: end, first: first, implicit: m})
		off = end
	}
	return q
}

// implicitCallFile scans one abbreviation table.
func implicitCallFile(abbr []byte, off uint64) map[uint64]bool {
	m := map[uint64]bool{}
	if off >= uint64(len(abbr)) {
		return m
	}
	b := abbr[off:]
	for len(b) > 0 {
		code, n := binary.Uvarint(b)
		if n <= 0 || code == 0 {
			return m
		}
		b = b[n:]
		tag, n := binary.Uvarint(b)
		if n <= 0 || len(b) < n+1 {
			return m
		}
		b = b[n+1:] // tag and has-children byte
		for {
			at, n1 := binary.Uvarint(b)
			if n1 <= 0 {
				return m
			}
			form, n2 := binary.Uvarint(b[n1:])
			if n2 <= 0 {
				return m
			}
			b = b[n1+n2:]
			if form == formImplicitConst {
				_, n3 := binary.Varint(b)
				if n3 <= 0 {
					return m
				}
				b = b[n3:]
			}
			if at == 0 && form == 0 {
				break
			}
			if tag == tagInlined && at == atCallFile && form == formImplicitConst {
				m[code] = true
			}
		}
	}
	return m
}

func (q *abbrevQuirks) callFileImplicit(off dwarf.Offset) bool {
	o := uint64(off)
	i := sort.Search(len(q.units), func(i int) bool { return q.units[i].end > o })
	if i == len(q.units) || q.units[i].start > o || o >= uint64(len(q.info)) {
		return false
	}
	code, n := binary.Uvarint(q.info[o:])
	return n > 0 && q.units[i].implicit[code]
}
