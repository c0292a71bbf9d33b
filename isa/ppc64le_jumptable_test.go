package isa

import (
	"encoding/binary"
	"slices"
	"testing"
)

// ppcMem is an image for jump-table tests: words at addresses.
type ppcMem map[uint64]uint32

func (m ppcMem) Bytes(lo, hi uint64) []byte {
	var b []byte
	for a := lo; a < hi; a += 4 {
		w, ok := m[a]
		if !ok {
			break
		}
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

func (m ppcMem) ReadData(addr uint64, n int) []byte {
	if b := m.Bytes(addr, addr+uint64(n)); len(b) == n {
		return b
	}
	return nil
}

// ppcSeq is code as the path runs it: each word at its address.
type ppcSeq []struct {
	addr uint64
	word uint32
}

// setup puts the code and a table of 4-byte entries at table into memory
// and decodes the path.
func (s ppcSeq) setup(table uint64, entries []int32) (ppcMem, []Inst) {
	m := ppcMem{}
	var path []Inst
	for _, w := range s {
		m[w.addr] = w.word
		path = append(path, ppc64le{}.Decode(binary.LittleEndian.AppendUint32(nil, w.word), w.addr))
	}
	for k, e := range entries {
		m[table+uint64(4*k)] = uint32(e)
	}
	// The TOC slot at TOC-0x8000+0x10 holds the table's address.
	m[jtTOC-0x8000+0x10], m[jtTOC-0x8000+0x14] = jtTable, 0
	return m, path
}

// The cases' table lies at 0x1800, the TOC base 0x29800 (so that
// addis rX,r2,-2 ; addi rX,rX,-0x8000 gives 0x1800); case code is in
// [0x1000, 0x2000).
const (
	jtTOC   = 0x29800
	jtTable = 0x1800
)

func jtTargets() Targets {
	return Targets{
		Valid: func(a uint64) bool { return a >= 0x1000 && a < 0x2000 },
		Start: func(a uint64) bool { return a%4 == 0 },
	}
}

// entriesTo are table entries relative to the table pointing at targets.
func entriesTo(targets ...uint64) []int32 {
	var e []int32
	for _, t := range targets {
		e = append(e, int32(int64(t)-jtTable))
	}
	return e
}

// TestJumpTablePPC64LE resolves the jump-table shapes of gcc and clang
// (the words are theirs, from the reference binaries, with the table and
// TOC moved).
func TestJumpTablePPC64LE(t *testing.T) {
	cases8 := []uint64{0x1100, 0x1110, 0x1120, 0x1130, 0x1140, 0x1150, 0x1160, 0x1170}
	// Two more entries that look valid, then one that is not: a bound
	// stops at 8, without one reading stops at the invalid one.
	entries := entriesTo(append(cases8, 0x1180, 0x1190, 0x5000)...)
	gccO2 := ppcSeq{
		{0x1000, 0x28090007}, // cmplwi r9,7
		{0x1004, 0x41810058}, // bgt 0x105c (falls through)
		{0x1008, 0x3d02fffe}, // addis r8,r2,-2
		{0x100c, 0x39088000}, // addi r8,r8,-32768
		{0x1010, 0x79291788}, // rldic r9,r9,2,30
		{0x1014, 0x7d284aaa}, // lwax r9,r8,r9
		{0x1018, 0x7d294214}, // add r9,r9,r8
		{0x101c, 0x7d2903a6}, // mtctr r9
		{0x1020, 0x4e800420}, // bctr
	}
	gccO0 := ppcSeq{
		{0x1000, 0x7c691b78}, // mr r9,r3
		{0x1004, 0x913f0020}, // stw r9,32(r31)
		{0x1008, 0x813f0020}, // lwz r9,32(r31)
		{0x100c, 0x28090007}, // cmplwi r9,7
		{0x1010, 0x418100d4}, // bgt (falls through)
		{0x1014, 0x813f0020}, // lwz r9,32(r31): the index again
		{0x1018, 0x792a1764}, // sldi r10,r9,2
		{0x101c, 0x3d02fffe}, // addis r8,r2,-2
		{0x1020, 0x39288000}, // addi r9,r8,-32768
		{0x1024, 0x7d2a4a14}, // add r9,r10,r9
		{0x1028, 0x81290000}, // lwz r9,0(r9)
		{0x102c, 0x7d2a07b4}, // extsw r10,r9
		{0x1030, 0x39288000}, // addi r9,r8,-32768
		{0x1034, 0x7d2a4a14}, // add r9,r10,r9
		{0x1038, 0x7d2903a6}, // mtctr r9
		{0x103c, 0x4e800420}, // bctr
	}
	// clang sets the base before the loop and reaches the dispatch by a
	// jump; the compare reads a masked copy of the index.
	clang := ppcSeq{
		{0x1000, 0x3ce2fffe}, // addis r7,r2,-2
		{0x1004, 0x38e78000}, // addi r7,r7,-32768
		{0x1008, 0x48000100}, // b 0x1108
		{0x1108, 0x5509043e}, // clrlwi r9,r8,16
		{0x110c, 0x28090007}, // cmplwi r9,7
		{0x1110, 0x41810074}, // bgt (falls through)
		{0x1114, 0x790813a8}, // rldic r8,r8,2,46
		{0x1118, 0x7d083aaa}, // lwax r8,r8,r7
		{0x111c, 0x7d083a14}, // add r8,r8,r7
		{0x1120, 0x7d0903a6}, // mtctr r8
		{0x1124, 0x4e800420}, // bctr
	}
	withBranch := func(s ppcSeq, i int, word uint32, taken uint64) ppcSeq {
		out := slices.Clone(s)
		out[i].word = word
		if taken != 0 {
			for k := i + 1; k < len(out); k++ {
				out[k].addr += taken - (out[i].addr + 4)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		seq     ppcSeq
		toc     uint64
		entries []int32
		want    []uint64
	}{
		{"gcc -O2: cmplwi 7; bgt falls through: 8 entries", gccO2, jtTOC, entries, cases8},
		{"gcc -O0: the index reloaded from its stack slot; lwz, extsw", gccO0, jtTOC, entries, cases8},
		{"clang: base before the loop, compare on clrlwi", clang, jtTOC, entries, cases8},
		{"ble taken bounds too: cmplwi 3 -> 4 entries", // cmplwi r9,3 ; ble 0x1104
			withBranch(withBranch(gccO2, 0, 0x28090003, 0), 1, 0x40810100, 0x1104), jtTOC, entries, cases8[:4]},
		{"bge falling through: cmplwi 7 -> 7 entries", // bge 0x105c
			withBranch(gccO2, 1, 0x40800058, 0), jtTOC, entries, cases8[:7]},
		{"bgt taken leaves the range: read while entries are valid", // bgt 0x1104
			withBranch(gccO2, 1, 0x41810100, 0x1104), jtTOC, entries, append(slices.Clone(cases8), 0x1180, 0x1190)},
		{"without a compare: read while entries are valid",
			gccO2[2:], jtTOC, entries, append(slices.Clone(cases8), 0x1180, 0x1190)},
		{"without the TOC base: no table", gccO2, 0, entries, nil},
		{"cmplw with a register set to the bound", // li r10,7 ; cmplw r9,r10
			append(ppcSeq{{0x0ffc, 0x39400007}, {0x1000, 0x7c095040}}, gccO2[1:]...), jtTOC, entries, cases8},
		{"a signed compare on the same CR field replaces the unsigned one", // cmplwi r9,7 ; cmpwi r9,100
			append(ppcSeq{{0x0ffc, 0x28090007}, {0x1000, 0x2c090064}}, gccO2[1:]...), jtTOC, entries, append(slices.Clone(cases8), 0x1180, 0x1190)},
		{"glibc: the table's address in a TOC slot", // ld r8,-32768+0x10(r2) holds 0x1800
			append(ppcSeq{gccO2[0], gccO2[1], {0x1008, 0x60000000}, {0x100c, 0xe9028010}}, gccO2[4:]...), jtTOC, entries, cases8},
		{"the index a constant before its loop on the path taken back", // li r9,0 ; cmplwi r9,7
			append(ppcSeq{{0x0ffc, 0x39200000}}, gccO2...), jtTOC, entries, cases8},
		{"the index a global, read once", // addis r9,r2,1 ; lwz r9,-7592(r9) ; cmplwi r9,7
			append(ppcSeq{{0x0ff8, 0x3d220001}, {0x0ffc, 0x8129e258}}, gccO2...), jtTOC, entries, cases8},
		{"an absolute base: lis; ori; clrldi (constants rotate exactly)", // lis r8,0 ; ori r8,r8,0x1800 ; clrldi r8,r8,32
			ppcSeq{gccO2[0], gccO2[1], {0x1008, 0x3d000000}, {0x100c, 0x61081800}, {0x1010, 0x79080020},
				{0x1014, 0x79291788}, {0x1018, 0x7d284aaa}, {0x101c, 0x7d294214}, {0x1020, 0x7d2903a6}, {0x1024, 0x4e800420}},
			0, entries, cases8},
	} {
		m, path := tc.seq.setup(jtTable, tc.entries)
		got := ppc64le{toc: tc.toc}.JumpTable(m, path, path[len(path)-1], jtTargets())
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: targets %#x, want %#x", tc.name, got, tc.want)
		}
	}
}

// TestJumpTablePPC64LEOther: indirect jumps that are no table, and tables
// of absolute 8-byte entries.
func TestJumpTablePPC64LEOther(t *testing.T) {
	for _, tc := range []struct {
		name string
		seq  ppcSeq
		data map[uint64]uint32
		want []uint64
	}{
		{"a function pointer: ld r12,0(r9); mtctr; bctr", ppcSeq{
			{0x1000, 0xe9890000}, {0x1004, 0x7d8903a6}, {0x1008, 0x4e800420}}, nil, nil},
		{"a call clobbers the index: no bound, read while valid", ppcSeq{
			{0x1000, 0x28030001}, // cmplwi r3,1
			{0x1004, 0x41810058}, // bgt (falls through)
			{0x1008, 0x48000101}, // bl
			{0x100c, 0x3d02fffe}, // addis r8,r2,-2
			{0x1010, 0x39088000}, // addi r8,r8,-32768
			{0x1014, 0x78691764}, // sldi r9,r3,2
			{0x1018, 0x7d284aaa}, // lwax r9,r8,r9
			{0x101c, 0x7d294214}, // add r9,r9,r8
			{0x1020, 0x7d2903a6}, // mtctr r9
			{0x1024, 0x4e800420}, // bctr
		}, map[uint64]uint32{jtTable: 0x100, jtTable + 4: 0x104, jtTable + 8: 0x108, jtTable + 12: 0x900000}, []uint64{0x1900, 0x1904, 0x1908}},
		{"absolute 8-byte entries: sldi 3; ldx; mtctr; bctr", ppcSeq{
			{0x1000, 0x28090001}, // cmplwi r9,1
			{0x1004, 0x41810058}, // bgt (falls through)
			{0x1008, 0x3d02fffe}, // addis r8,r2,-2
			{0x100c, 0x39088000}, // addi r8,r8,-32768
			{0x1010, 0x79291f24}, // sldi r9,r9,3
			{0x1014, 0x7d28482a}, // ldx r9,r8,r9
			{0x1018, 0x7d2903a6}, // mtctr r9
			{0x101c, 0x4e800420}, // bctr
		}, map[uint64]uint32{jtTable: 0x1200, jtTable + 4: 0, jtTable + 8: 0x1300, jtTable + 12: 0}, []uint64{0x1200, 0x1300}},
	} {
		m, path := tc.seq.setup(0, nil)
		for a, w := range tc.data {
			m[a] = w
		}
		got := ppc64le{toc: jtTOC}.JumpTable(m, path, path[len(path)-1], jtTargets())
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: targets %#x, want %#x", tc.name, got, tc.want)
		}
	}
}
