package loader

import (
	"cmp"
	"errors"
	"io"
	"slices"
	"sort"

	"bloop/dwarfscan"
)

// LineRow maps the addresses [Addr, End) to a source line.
type LineRow struct {
	Addr, End uint64
	File      string
	Line      int
}

// LineTable is the image's line table: rows of every unit with non-empty
// ranges inside executable sections, sorted by address, disjoint.
type LineTable struct {
	// rows hold no pointers (a file is an index into files): libjvm has
	// 1.8 million, which the garbage collector then need not scan.
	rows  []lineRow
	files []string
	// Overlaps counts rows that ran into a later-starting row of another
	// sequence and were cut at its start (the thesis's lying line tables,
	// 4.3: the later row is the one that describes the code there).
	Overlaps int
	open     []unitRow // rows that run on past their sequence, to clipOpen
	// beyond holds what clipOpen cut off the open rows: seen from their
	// own unit, they still run on there (Beyond).
	beyond []unitRow
}

// unitRow is a row only one unit's procedures see, and the line program
// (DW_AT_stmt_list) it came from: one that runs on past its sequence.
type unitRow struct {
	lineRow
	unit uint64
}

// clipOpen ends the rows that run on past their sequence at the next
// procedure's entry, once the procedures are known; each is kept whole
// for its own unit's procedures (Beyond), which see it even where another
// unit's row starts at the same address and so took its place in the
// table (libc.so.6's _nl_load_domain.cold ends its sequence at abort's
// entry, where abort.c's rows start).
func (t *LineTable) clipOpen(img *Image) {
	for _, o := range t.open {
		t.beyond = append(t.beyond, o)
		i := sort.Search(len(t.rows), func(i int) bool { return t.rows[i].addr >= o.addr })
		if i < len(t.rows) && t.rows[i].addr == o.addr && t.rows[i].file == o.file && t.rows[i].line == o.line {
			if f := img.nextFuncStart(o.addr); f > o.addr && f < t.rows[i].end {
				t.rows[i].end = f
			}
		}
	}
	t.open = nil
}

// Beyond returns the rows that, as Dyninst reads the line table, the
// procedures of sub's unit see before the table's own (nil for none):
// Dyninst asks a procedure's own unit first, and a row that runs on past
// its sequence (gcc's mark after a last call that does not return) covers,
// for that unit, everything up to the unit's next sequence, though other
// procedures' code lies there (aarch64's _start and call_weak_fn, which
// main's parse reaches by falling out after abort@plt; abort's code, which
// libc.so.6's _nl_load_domain reaches through its .cold part's call to
// the next instruction, all of it loadmsgcat.c:509 for hpcstruct). Only
// rows read with hpcstruct's spelling (Options.RawFileNames) run on.
func (t *LineTable) Beyond(sub *Subprogram) []LineRow {
	if sub == nil || sub.lineUnit == 0 {
		return nil
	}
	var out []LineRow
	for _, r := range t.beyond {
		if r.unit+1 == sub.lineUnit {
			out = append(out, LineRow{Addr: r.addr, End: r.end, File: t.files[r.file], Line: int(r.line)})
		}
	}
	return out
}

type lineRow struct {
	addr, end uint64
	file      uint32
	line      int32
}

// NewLineTable makes a table of sorted, disjoint rows (for images built
// by hand).
func NewLineTable(rows []LineRow) *LineTable {
	b := lineBuilder{}
	for _, r := range rows {
		b.add1(r.Addr, r.End, b.fileIndex(r.File), r.Line)
	}
	return &LineTable{rows: b.rows, files: b.files}
}

// Len is the number of rows.
func (t *LineTable) Len() int { return len(t.rows) }

// Row returns row i.
func (t *LineTable) Row(i int) LineRow {
	r := &t.rows[i]
	return LineRow{Addr: r.addr, End: r.end, File: t.files[r.file], Line: int(r.line)}
}

// Lookup returns the row covering addr.
func (t *LineTable) Lookup(addr uint64) (LineRow, bool) {
	r, _, ok := t.LookupNear(addr, -1)
	return r, ok
}

// LookupNear is Lookup for callers that walk addresses upward: hint is
// the index of the row found last (or -1), and the row after it is tried
// before a search. It returns the row's index too.
func (t *LineTable) LookupNear(addr uint64, hint int) (LineRow, int, bool) {
	for i := hint; i >= 0 && i < len(t.rows) && i <= hint+1; i++ {
		if r := &t.rows[i]; r.addr <= addr && addr < r.end {
			return t.Row(i), i, true
		}
	}
	i := sort.Search(len(t.rows), func(i int) bool { return t.rows[i].addr > addr }) - 1
	if i >= 0 && addr < t.rows[i].end {
		return t.Row(i), i, true
	}
	return LineRow{}, -1, false
}

// Search returns the index of the first row that ends after addr (Len()
// when none does).
func (t *LineTable) Search(addr uint64) int {
	return sort.Search(len(t.rows), func(i int) bool { return t.rows[i].end > addr })
}

// NextStart is the start of the first row that begins after addr, or 0.
func (t *LineTable) NextStart(addr uint64) uint64 {
	i := sort.Search(len(t.rows), func(i int) bool { return t.rows[i].addr > addr })
	if i < len(t.rows) {
		return t.rows[i].addr
	}
	return 0
}

// Empty reports whether the image has no line information.
func (t *LineTable) Empty() bool { return len(t.rows) == 0 }

// lineBuilder collects rows, with file names numbered as they come.
type lineBuilder struct {
	img    *Image
	rows   []lineRow
	files  []string
	fileOf map[string]uint32
	open   []unitRow // rows that run on past their sequence (add)
	bad    *tally    // where add counts corrupt programs; nil: not counted
}

// corrupt counts a corrupt line program at off.
func (b *lineBuilder) corrupt(kind string, off uint64) {
	if b.bad != nil {
		b.bad.add(kind, ".debug_line", off)
	}
}

func (b *lineBuilder) fileIndex(name string) uint32 {
	if i, ok := b.fileOf[name]; ok {
		return i
	}
	if b.fileOf == nil {
		b.fileOf = map[string]uint32{}
	}
	i := uint32(len(b.files))
	b.files = append(b.files, name)
	b.fileOf[name] = i
	return i
}

func (b *lineBuilder) add1(addr, end uint64, file uint32, line int) {
	b.rows = append(b.rows, lineRow{addr: addr, end: end, file: file, line: int32(line)})
}

// add reads the rows of a unit's line program, which starts at off in
// .debug_line; joined is its file table with absolute names (fileIn with
// real).
func (b *lineBuilder) add(lp *dwarfscan.LineProgram, off uint64, joined []string, compDir string, real *realPaths) {
	// The program's file numbers, numbered for the table as first used.
	var index []uint32
	have := []bool(nil)
	file := func(i int) uint32 {
		if i >= len(index) {
			files := lp.Files() // DW_LNE_define_file may have added some
			index = append(index, make([]uint32, len(files)-len(index))...)
			have = append(have, make([]bool, len(files)-len(have))...)
		}
		if i < 0 || i >= len(index) {
			b.corrupt(CorruptFileIndex, off)
			return b.fileIndex("")
		}
		if !have[i] {
			name := ""
			if i < len(joined) {
				name = joined[i]
			} else {
				name = fileIn(lp.Files()[i], compDir, real) // added by DW_LNE_define_file
			}
			index[i], have[i] = b.fileIndex(name), true
		}
		return index[i]
	}
	var prev, row dwarfscan.LineRow
	ok := false
	var sec *Section // the section of the last row, usually the next one's too
	// As Dyninst reads them (real != nil: hpcstruct's spelling), a row
	// that ends its sequence where it starts (gcc's mark after a call that
	// does not return) covers the linker's padding after it, up to the
	// next sequence, or the next procedure (clipOpen): hpcstruct gives the
	// nop at 0x247c of tmpl-aarch64-gcc12-O2, which its parse reaches by
	// falling out of a procedure, line 639.
	var open []dwarfscan.LineRow
	var starts []uint64 // of the sequences
	first := true
	for {
		if err := lp.Next(&row); err != nil {
			if errors.Is(err, dwarfscan.ErrInlinedCall) {
				b.corrupt(CorruptInlinedCall, off) // keep what was read
			} else if !errors.Is(err, io.EOF) {
				b.corrupt(CorruptLineProgram, off)
			}
			break
		}
		if first && !row.EndSequence {
			starts = append(starts, row.Address)
		}
		first = row.EndSequence
		if ok && row.EndSequence && row.Address == prev.Address && real != nil {
			open = append(open, prev)
		}
		if ok && row.Address > prev.Address {
			// Thesis 4.3: rows outside executable sections are lies (discarded
			// COMDAT and garbage-collected code relocated to 0).
			if sec == nil || prev.Address < sec.Addr || prev.Address >= sec.End() {
				sec = b.img.SectionAt(prev.Address)
			}
			if sec != nil {
				if uint(prev.Line) > maxLine { // negative ones too
					b.corrupt(CorruptLine, off)
				}
				if row.Address > sec.End() {
					b.corrupt(CorruptLinePastSection, off)
				}
				b.add1(prev.Address, min(row.Address, sec.End()), file(prev.File), prev.Line)
			}
		} else if ok && row.Address < prev.Address {
			b.corrupt(CorruptLineBackwards, off)
		}
		if row.EndSequence {
			ok = false
			continue
		}
		prev, ok = row, true
	}
	for _, r := range open {
		end := ^uint64(0)
		for _, a := range starts {
			if a >= r.Address {
				end = min(end, a)
			}
		}
		if end == r.Address {
			continue // a sequence starts there: its row holds
		}
		if s := b.img.SectionAt(r.Address); s != nil && end != ^uint64(0) {
			b.add1(r.Address, min(end, s.End()), file(r.File), r.Line)
			b.open = append(b.open, unitRow{b.rows[len(b.rows)-1], off})
		}
	}
}

// sortRows orders the rows by address, stably: each unit sorts its own
// while units are still being read, and mergeRows joins them.
func (b *lineBuilder) sortRows() {
	slices.SortStableFunc(b.rows, func(x, y lineRow) int { return cmp.Compare(x.addr, y.addr) })
}

// mergeRows joins the sorted rows of the units in address order; rows at
// the same address keep unit order, so the result is the stable sort of
// all rows in unit order. Files are renumbered for the table.
func (b *lineBuilder) mergeRows(units []*lineBuilder) {
	index := make([][]uint32, len(units))
	n := 0
	for k, u := range units {
		index[k] = make([]uint32, len(u.files))
		for i, f := range u.files {
			index[k][i] = b.fileIndex(f)
		}
		n += len(u.rows)
	}
	b.rows = allocRows(n)
	for k, u := range units {
		for _, o := range u.open {
			o.file = index[k][o.file]
			b.open = append(b.open, o)
		}
	}
	// A heap of the units' next rows, by address, then unit.
	type cursor struct{ unit, next int }
	less := func(x, y cursor) bool {
		ax, ay := units[x.unit].rows[x.next].addr, units[y.unit].rows[y.next].addr
		return ax < ay || ax == ay && x.unit < y.unit
	}
	var h []cursor
	for k, u := range units {
		if len(u.rows) > 0 {
			h = append(h, cursor{k, 0})
		}
	}
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && less(h[r], h[l]) {
				l = r
			}
			if !less(h[l], h[i]) {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(h) > 0 {
		c := &h[0]
		u := units[c.unit]
		// Take the unit's rows while they come before every other unit's.
		for {
			r := u.rows[c.next]
			r.file = index[c.unit][r.file]
			b.rows = append(b.rows, r)
			c.next++
			if c.next == len(u.rows) {
				h[0] = h[len(h)-1]
				h = h[:len(h)-1]
				break
			}
			if len(h) > 1 && (less(h[1], *c) || len(h) > 2 && less(h[2], *c)) {
				break
			}
		}
		down(0)
	}
}

// finish resolves overlapping sequences in the sorted rows: the earlier
// row yields where a later one starts.
func (b *lineBuilder) finish() *LineTable {
	out := b.rows[:0]
	overlaps := 0
	for _, r := range b.rows {
		if n := len(out); n > 0 && out[n-1].end > r.addr {
			overlaps++
			out[n-1].end = r.addr
			if out[n-1].end == out[n-1].addr {
				out = out[:n-1]
			}
		}
		out = append(out, r)
	}
	return &LineTable{rows: out, files: b.files, Overlaps: overlaps, open: b.open}
}
