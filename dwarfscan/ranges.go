package dwarfscan

import (
	"fmt"

	"bloop/structure"
)

// RLE kinds of DWARF 5 range lists (section 7.25).
const (
	rleEndOfList    = 0
	rleBaseAddressx = 1
	rleStartxEndx   = 2
	rleStartxLength = 3
	rleOffsetPair   = 4
	rleBaseAddress  = 5
	rleStartEnd     = 6
	rleStartLength  = 7
)

// Ranges appends to dst the address ranges of entry e of unit u and
// returns it: the same ranges, in the same order, as debug/dwarf's
// (*Data).Ranges. That is DW_AT_low_pc with DW_AT_high_pc (an address,
// or a constant offset from low_pc), then the list DW_AT_ranges points to:
// in .debug_rnglists for DWARF 5 units (an offset or a DW_FORM_rnglistx
// index), in .debug_ranges otherwise. The base address of the lists is
// the unit root's DW_AT_entry_pc or else its DW_AT_low_pc. Unlike
// debug/dwarf, a list cut short by the end of its section and an unknown
// DW_RLE kind are errors rather than a silent stop or a skipped byte.
func (d *Data) Ranges(u *Unit, e *Entry, dst []structure.Range) ([]structure.Range, error) {
	var lowF, highF, rngF *Field
	for i := range e.Fields {
		f := &e.Fields[i]
		switch f.Attr {
		case AttrLowPC:
			if lowF == nil {
				lowF = f
			}
		case AttrHighPC:
			if highF == nil {
				highF = f
			}
		case AttrRanges:
			if rngF == nil {
				rngF = f
			}
		}
	}
	if lowF != nil && lowF.Class == ClassAddress && highF != nil {
		low := lowF.Val
		switch {
		case highF.Class == ClassAddress:
			dst = append(dst, structure.Range{Lo: low, Hi: highF.Val})
		case highF.Class == ClassConstant && highF.Form != FormData16:
			dst = append(dst, structure.Range{Lo: low, Hi: low + highF.Val})
		}
	}
	if rngF == nil {
		return dst, nil
	}
	base := u.base
	if e.Tag == TagCompileUnit {
		base = 0
		if v, ok := e.Addr(AttrEntryPC); ok {
			base = v
		} else if v, ok := e.Addr(AttrLowPC); ok {
			base = v
		}
	}
	if u.Version >= 5 && d.s.RngLists != nil {
		switch rngF.Class {
		case ClassSecOffset:
			return d.rnglist(u, base, rngF.Val, dst)
		case ClassRngList:
			off, err := d.rnglistx(u, rngF.Val)
			if err != nil {
				return dst, err
			}
			return d.rnglist(u, base, off, dst)
		}
		return dst, nil
	}
	if d.s.Ranges != nil && (rngF.Class == ClassSecOffset || rngF.Class == ClassConstant && rngF.Form != FormData16) {
		return d.ranges(u, base, rngF.Val, dst)
	}
	return dst, nil
}

// rnglistx returns the .debug_rnglists offset of range list number i of
// unit u, read from the offset table at the unit's DW_AT_rnglists_base.
func (d *Data) rnglistx(u *Unit, i uint64) (uint64, error) {
	size := uint64(4)
	if u.Dwarf64 {
		size = 8
	}
	sec := d.s.RngLists
	at := u.RngListsBase + i*size
	if i > uint64(len(sec))/size || at < u.RngListsBase {
		return 0, decodeErr(".debug_rnglists", clampInt(u.RngListsBase), fmt.Errorf("%w: range list index %d", ErrBadOffset, i))
	}
	v, ok := fixed(sec, clampInt(at), int(size))
	if !ok {
		return 0, decodeErr(".debug_rnglists", clampInt(u.RngListsBase), fmt.Errorf("%w: range list index %d", ErrBadOffset, i))
	}
	return u.RngListsBase + v, nil
}

func addrSizeOK(n int) bool { return n == 1 || n == 2 || n == 4 || n == 8 }

// ranges reads a DWARF 2-4 range list at off in .debug_ranges.
func (d *Data) ranges(u *Unit, base, off uint64, dst []structure.Range) ([]structure.Range, error) {
	if off > uint64(len(d.s.Ranges)) {
		return dst, decodeErr(".debug_ranges", 0, fmt.Errorf("%w: list offset %#x", ErrBadOffset, off))
	}
	if !addrSizeOK(u.AddrSize) {
		return dst, decodeErr(".debug_ranges", int(off), fmt.Errorf("%w: %d", ErrAddressSize, u.AddrSize))
	}
	as := u.AddrSize
	selector := ^uint64(0) >> (64 - 8*as)
	b := buf{data: d.s.Ranges, pos: int(off), sec: ".debug_ranges"}
	for b.pos < len(b.data) {
		lo, hi := b.fixed(as), b.fixed(as)
		if b.err != nil {
			return dst, b.err
		}
		switch {
		case lo == 0 && hi == 0:
			return dst, nil
		case lo == selector:
			base = hi
		default:
			dst = append(dst, structure.Range{Lo: base + lo, Hi: base + hi})
		}
	}
	return dst, nil
}

// rnglist reads a DWARF 5 range list at off in .debug_rnglists.
func (d *Data) rnglist(u *Unit, base, off uint64, dst []structure.Range) ([]structure.Range, error) {
	if off > uint64(len(d.s.RngLists)) {
		return dst, decodeErr(".debug_rnglists", 0, fmt.Errorf("%w: list offset %#x", ErrBadOffset, off))
	}
	as := u.AddrSize
	b := buf{data: d.s.RngLists, pos: int(off), sec: ".debug_rnglists"}
	addrx := func(i uint64) uint64 {
		if b.err != nil {
			return 0
		}
		v, err := d.addrx(u, i)
		if err != nil {
			b.fail(err)
		}
		return v
	}
	addr := func() uint64 {
		if !addrSizeOK(as) {
			b.fail(fmt.Errorf("%w: %d", ErrAddressSize, as))
			return 0
		}
		return b.fixed(as)
	}
	for {
		at := b.pos
		kind := b.u8()
		var lo, hi uint64
		switch kind {
		case rleEndOfList:
			return dst, b.err
		case rleBaseAddressx:
			base = addrx(b.uleb())
			continue
		case rleBaseAddress:
			base = addr()
			continue
		case rleStartxEndx:
			i, j := b.uleb(), b.uleb()
			lo, hi = addrx(i), addrx(j)
		case rleStartxLength:
			i, n := b.uleb(), b.uleb()
			lo = addrx(i)
			hi = lo + n
		case rleOffsetPair:
			lo, hi = b.uleb(), b.uleb()
			lo, hi = base+lo, base+hi
		case rleStartEnd:
			lo = addr()
			hi = addr()
		case rleStartLength:
			lo = addr()
			hi = lo + b.uleb()
		default:
			b.pos = at
			b.fail(fmt.Errorf("%w: range list entry kind %#x", ErrMalformed, kind))
		}
		if b.err != nil {
			return dst, b.err
		}
		dst = append(dst, structure.Range{Lo: lo, Hi: hi})
	}
}
