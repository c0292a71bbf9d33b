package loader

import (
	"cmp"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"bloop/dwarfscan"
	"bloop/internal/testenv"
)

// TestCompressedDebugSections: an image whose DWARF is zlib-compressed
// (SHF_COMPRESSED, and the older .zdebug_ sections) reads exactly as the
// same image uncompressed. The walk of units begins while .debug_info is
// still being inflated; in steps of a few bytes here, so units arrive over
// many steps, and walkers (1 and 3) wait for them.
func TestCompressedDebugSections(t *testing.T) {
	defer func(n int) { inflateChunk = n }(inflateChunk)
	inflateChunk = 97
	objcopy := testenv.Need(t, "objcopy")
	for _, name := range []string{"tmpl-gcc12-O2", "inline-clang14-O2", "nest-gfortran12-O2", "libinline-gcc12-O2.so"} {
		src := filepath.Join("../testdata/bin", name)
		plain, err := Open(src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, style := range []string{"zlib", "zlib-gnu"} {
			dst := filepath.Join(t.TempDir(), name)
			if out, err := exec.Command(objcopy, "--compress-debug-sections="+style, src, dst).CombinedOutput(); err != nil {
				t.Fatalf("objcopy: %v: %s", err, out)
			}
			for _, workers := range []int{1, 3} {
				img, err := Open(dst, Options{Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				if len(img.Warnings) > 0 {
					t.Errorf("%s %s: warnings %v", name, style, img.Warnings)
				}
				if !reflect.DeepEqual(img.Lines, plain.Lines) {
					t.Errorf("%s %s -j%d: line table differs (%d rows, want %d)", name, style, workers, img.Lines.Len(), plain.Lines.Len())
				}
				if !reflect.DeepEqual(img.Procs, plain.Procs) || !reflect.DeepEqual(img.Descriptors, plain.Descriptors) {
					t.Errorf("%s %s -j%d: procedures differ (%d, want %d)", name, style, workers, len(img.Procs), len(plain.Procs))
				}
			}
		}
	}
}

// TestDeclBeyondSnapshot: a walker whose index covers only the units that
// had arrived resolves a reference into a later unit through the whole
// index, with the result the whole index gives.
func TestDeclBeyondSnapshot(t *testing.T) {
	// The corpus binaries have one unit each.
	path := "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"
	testenv.NeedFile(t, path, "libstdc++6-12-dbg")

	f, raw, err := openELF(path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	fb, err := newFileBytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := openDWARF(f, fb, 1)
	if err != nil {
		t.Fatal(err)
	}
	for range ds.progress {
	}
	whole, err := dwarfscan.New(ds.Sections)
	if err != nil {
		t.Fatal(err)
	}
	units := whole.Units()
	if len(units) < 2 {
		t.Fatal("one unit only")
	}
	// A named subprogram in the last unit.
	last := len(units) - 1
	rd := whole.Reader()
	rd.SeekUnit(last)
	var target uint64
	for e := (dwarfscan.Entry{}); rd.Next(&e) == nil; {
		if _, ok := e.String(dwarfscan.AttrName); ok && e.Tag == dwarfscan.TagSubprogram {
			target = e.Offset
			break
		}
	}
	if target == 0 {
		t.Fatal("no named subprogram in the last unit")
	}
	snap, err := dwarfscan.NewBuilder(ds.Sections).Extend(int(units[0].End))
	if err != nil || len(snap.Units()) != 1 {
		t.Fatalf("snapshot: %v, %d units", err, len(snap.Units()))
	}
	img, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	early := newUnitWalk(img, snap)
	asked := false
	early.whole = func() *dwarfscan.Data { asked = true; return whole }
	got := early.decl(target, 0, 0)
	want := newUnitWalk(img, whole).decl(target, 0, 0)
	if !asked || *got != *want || want.Name == "" {
		t.Errorf("decl beyond the snapshot: %+v (whole asked: %v), want %+v", *got, asked, *want)
	}
}

// TestMergeRows: merging units' sorted rows is the stable sort of all
// rows in unit order (ties at one address keep unit order), files
// renumbered by name.
func TestMergeRows(t *testing.T) {
	seed := uint32(7)
	rnd := func(n int) int { seed = seed*1664525 + 1013904223; return int(seed>>8) % n }
	for round := 0; round < 200; round++ {
		var units []*lineBuilder
		var all []LineRow
		for u := rnd(6); u >= 0; u-- {
			b := &lineBuilder{}
			for r := rnd(12); r > 0; r-- {
				a := uint64(rnd(40))
				f := []string{"a.c", "b.h", "c.h"}[rnd(3)]
				b.add1(a, a+uint64(1+rnd(4)), b.fileIndex(f), rnd(100))
			}
			for i := range b.rows {
				r := b.rows[i]
				all = append(all, LineRow{Addr: r.addr, End: r.end, File: b.files[r.file], Line: int(r.line)})
			}
			b.sortRows()
			units = append(units, b)
		}
		slices.SortStableFunc(all, func(x, y LineRow) int { return cmp.Compare(x.Addr, y.Addr) })
		m := &lineBuilder{}
		m.mergeRows(units)
		got := &LineTable{rows: m.rows, files: m.files}
		if got.Len() != len(all) {
			t.Fatalf("round %d: %d rows, want %d", round, got.Len(), len(all))
		}
		for i := range all {
			if got.Row(i) != all[i] {
				t.Fatalf("round %d: row %d is %+v, want %+v", round, i, got.Row(i), all[i])
			}
		}
	}
}

// TestLookupNear: whatever the hint, LookupNear finds what Lookup finds.
func TestLookupNear(t *testing.T) {
	tab := NewLineTable([]LineRow{
		{Addr: 0x10, End: 0x14, File: "a.c", Line: 1}, {Addr: 0x14, End: 0x18, File: "a.c", Line: 2},
		{Addr: 0x20, End: 0x24, File: "b.c", Line: 3}, {Addr: 0x24, End: 0x30, File: "a.c", Line: 4},
	})
	for a := uint64(0); a < 0x34; a++ {
		want, wok := tab.Lookup(a)
		for hint := -1; hint <= tab.Len()+1; hint++ {
			got, i, ok := tab.LookupNear(a, hint)
			if ok != wok || got != want || ok && tab.Row(i) != got {
				t.Errorf("%#x hint %d: %+v %v (row %d), want %+v %v", a, hint, got, ok, i, want, wok)
			}
		}
	}
}

// ReadData near the top of the address space: an address computed from
// hostile code (a jump-table base of -4) must give nil, not wrap around
// and slice out of range (found by FuzzPPC64LE).
func TestReadDataAtTopOfMemory(t *testing.T) {
	top := &Section{Name: ".rodata", Addr: 0xffff_ffff_ffff_f000, Data: make([]byte, 0xfff)}
	top.Data[0xffa] = 7
	img := FromSections(AMD64, nil, []*Section{top})
	for _, c := range []struct {
		addr uint64
		n    int
		want int // length of the answer, -1 for nil
	}{
		{0xffff_ffff_ffff_fffc, 8, -1},
		{0xffff_ffff_ffff_fffc, 3, 3},
		{0xffff_ffff_ffff_fffa, 1, 1},
		{0xffff_ffff_ffff_fffe, 2, -1},
		{0xffff_ffff_ffff_f000, -1, -1},
		{0xffff_ffff_ffff_f000, 0xfff, 0xfff},
		{0xffff_ffff_ffff_f000, 0x1000, -1},
	} {
		got := img.ReadData(c.addr, c.n)
		if c.want < 0 && got != nil || c.want >= 0 && len(got) != c.want {
			t.Errorf("ReadData(%#x, %d) = %d bytes, want %d", c.addr, c.n, len(got), c.want)
		}
	}
	if b := img.ReadData(0xffff_ffff_ffff_fffa, 1); len(b) != 1 || b[0] != 7 {
		t.Errorf("ReadData(%#x, 1) = %v, want [7]", uint64(0xffff_ffff_ffff_fffa), b)
	}
}
