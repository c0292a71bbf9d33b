package dwarfscan

import (
	"errors"
	"slices"
	"testing"

	"bloop/structure"
)

// TestRngLists reads a DWARF 5 range list that uses every DW_RLE kind,
// through DW_FORM_rnglistx and DW_FORM_sec_offset, and checks it against
// hand-computed ranges and debug/dwarf.
func TestRngLists(t *testing.T) {
	var addr wbuf
	addr.u32(4 + 4*8)
	addr.u16(5)
	addr.u8(8, 0)
	for _, a := range []uint64{0x1000, 0x2000, 0x3000, 0x4000} {
		addr.u64(a)
	}
	var rl wbuf
	rl.u32(0) // length, patched below
	rl.u16(5)
	rl.u8(8, 0)
	rl.u32(1)      // one offset
	rl.u32(4)      // list 0 starts 4 bytes after the offsets' base (12)
	l0 := rl.off() // 16
	rl.u8(rleBaseAddressx)
	rl.uleb(0) // base 0x1000
	rl.u8(rleOffsetPair)
	rl.uleb(0x10)
	rl.uleb(0x20)
	rl.u8(rleStartxEndx)
	rl.uleb(1)
	rl.uleb(2)
	rl.u8(rleStartxLength)
	rl.uleb(3)
	rl.uleb(0x30)
	rl.u8(rleBaseAddress)
	rl.u64(0x5000)
	rl.u8(rleOffsetPair)
	rl.uleb(1)
	rl.uleb(2)
	rl.u8(rleStartEnd)
	rl.u64(0x6000)
	rl.u64(0x6100)
	rl.u8(rleStartLength)
	rl.u64(0x7000)
	rl.uleb(0x10)
	rl.u8(rleEndOfList)
	l1 := rl.off()
	rl.u8(rleOffsetPair) // relative to the unit's base, DW_AT_low_pc
	rl.uleb(0)
	rl.uleb(4)
	rl.u8(rleEndOfList)
	bad := rl.off()
	rl.u8(0x2a) // no such kind
	rl.patch32(0, rl.off()-4)
	_ = l0

	abbrev := abbrevTableBytes(
		abbr{1, TagCompileUnit, true, []spec{{AttrLowPC, FormAddrx1, 0}, {AttrAddrBase, FormSecOffset, 0}, {AttrRnglistsBase, FormSecOffset, 0}}},
		abbr{2, TagSubprogram, false, []spec{{AttrRanges, FormRnglistx, 0}}},
		abbr{3, TagLexicalBlock, false, []spec{{AttrRanges, FormSecOffset, 0}}},
		abbr{4, TagSubprogram, false, []spec{{AttrLowPC, FormAddr, 0}, {AttrHighPC, FormData4, 0}}},
	)
	var body wbuf
	body.u8(1, 0)
	body.u32(8)
	body.u32(12)
	body.u8(2, 0)
	body.u8(3)
	body.u32(l1)
	body.u8(4)
	body.u64(0x9000)
	body.u32(0x20)
	body.u8(0)
	s := Sections{Info: unitV5(body), Abbrev: abbrev, Addr: addr, RngLists: rl}
	d, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	u := &d.Units()[0]
	if u.LowPC != 0x1000 || u.AddrBase != 8 || u.RngListsBase != 12 {
		t.Fatalf("unit: low_pc %#x addr_base %d rnglists_base %d", u.LowPC, u.AddrBase, u.RngListsBase)
	}
	want := [][]structure.Range{
		nil, // the root has low_pc but neither high_pc nor ranges
		{{Lo: 0x1010, Hi: 0x1020}, {Lo: 0x2000, Hi: 0x3000}, {Lo: 0x4000, Hi: 0x4030}, {Lo: 0x5001, Hi: 0x5002}, {Lo: 0x6000, Hi: 0x6100}, {Lo: 0x7000, Hi: 0x7010}},
		{{Lo: 0x1000, Hi: 0x1004}},
		{{Lo: 0x9000, Hi: 0x9020}},
	}
	es := readAll(t, d, 0)
	for i, w := range want {
		got, err := d.Ranges(u, &es[i], nil)
		if err != nil || !slices.Equal(got, w) {
			t.Errorf("entry %d: ranges %x, %v; want %x", i, got, err, w)
		}
	}
	std, err := stdDWARF(s)
	if err != nil {
		t.Fatal(err)
	}
	compareAll(t, std, d)

	// A list with an unknown entry kind is an error, not a silent stop.
	es[2].Fields[0].Val = uint64(bad)
	if _, err := d.Ranges(u, &es[2], nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("unknown DW_RLE kind: %v", err)
	}
	// So is an index past the offset table, and a list cut short.
	es[1].Fields[0].Val = 1 << 40
	if _, err := d.Ranges(u, &es[1], nil); !errors.Is(err, ErrBadOffset) {
		t.Errorf("rnglistx past the table: %v", err)
	}
	es[2].Fields[0].Val = uint64(len(rl))
	if _, err := d.Ranges(u, &es[2], nil); err == nil {
		t.Errorf("list cut short: no error")
	}
}

// TestRangesV4 reads a .debug_ranges list with a base address selection
// entry, based on the unit's low_pc.
func TestRangesV4(t *testing.T) {
	var rg wbuf
	rg.u64(0x10)
	rg.u64(0x20)
	rg.u64(^uint64(0)) // base address selection
	rg.u64(0x8000)
	rg.u64(1)
	rg.u64(2)
	rg.u64(0)
	rg.u64(0)
	abbrev := abbrevTableBytes(
		abbr{1, TagCompileUnit, true, []spec{{AttrLowPC, FormAddr, 0}}},
		abbr{2, TagSubprogram, false, []spec{{AttrRanges, FormSecOffset, 0}}},
		abbr{3, TagSubprogram, false, []spec{{AttrLowPC, FormAddr, 0}, {AttrHighPC, FormAddr, 0}}},
	)
	var body wbuf
	body.u8(1)
	body.u64(0x1000)
	body.u8(2)
	body.u32(0)
	body.u8(3)
	body.u64(0x3000)
	body.u64(0x3010)
	body.u8(0)
	s := Sections{Info: unitV4(4, body), Abbrev: abbrev, Ranges: rg}
	d, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	es := readAll(t, d, 0)
	u := &d.Units()[0]
	for i, w := range [][]structure.Range{nil, {{Lo: 0x1010, Hi: 0x1020}, {Lo: 0x8001, Hi: 0x8002}}, {{Lo: 0x3000, Hi: 0x3010}}} {
		if got, err := d.Ranges(u, &es[i], nil); err != nil || !slices.Equal(got, w) {
			t.Errorf("entry %d: ranges %x, %v; want %x", i, got, err, w)
		}
	}
	std, err := stdDWARF(s)
	if err != nil {
		t.Fatal(err)
	}
	compareAll(t, std, d)
}
