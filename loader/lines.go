package loader

import (
	"cmp"
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
// ranges inside executable sections, sorted by address.
type LineTable struct {
	Rows []LineRow
	// Overlaps counts rows that ran into a later-starting row of another
	// sequence and were cut at its start (the thesis's lying line tables,
	// 4.3: the later row is the one that describes the code there).
	Overlaps int
}

// Lookup returns the row covering addr.
func (t *LineTable) Lookup(addr uint64) (LineRow, bool) {
	i := sort.Search(len(t.Rows), func(i int) bool { return t.Rows[i].Addr > addr }) - 1
	if i >= 0 && addr < t.Rows[i].End {
		return t.Rows[i], true
	}
	return LineRow{}, false
}

// Empty reports whether the image has no line information.
func (t *LineTable) Empty() bool { return len(t.Rows) == 0 }

type lineBuilder struct {
	img  *Image
	rows []LineRow
}

func (b *lineBuilder) add(d *dwarfscan.Data, u *dwarfscan.Unit) error {
	lp, err := d.LineProgram(u)
	if err != nil || lp == nil {
		return err
	}
	// File names joined with the compilation directory, once per file.
	files := lp.Files()
	names := make([]string, len(files))
	joined := make([]bool, len(files))
	name := func(i int) string {
		if i >= len(files) { // DW_LNE_define_file added it
			files = lp.Files()
			names = append(names, make([]string, len(files)-len(names))...)
			joined = append(joined, make([]bool, len(files)-len(joined))...)
		}
		if i < 0 || i >= len(files) {
			return ""
		}
		if !joined[i] {
			names[i], joined[i] = absFile(files[i], u.CompDir), true
		}
		return names[i]
	}
	var prev, row dwarfscan.LineRow
	have := false
	var sec *Section // the section of the last row, usually the next one's too
	for {
		if err := lp.Next(&row); err != nil {
			break // io.EOF, or a corrupt program: keep what was read
		}
		if have && row.Address > prev.Address {
			// Thesis 4.3: rows outside executable sections are lies (discarded
			// COMDAT and garbage-collected code relocated to 0).
			if sec == nil || prev.Address < sec.Addr || prev.Address >= sec.End() {
				sec = b.img.SectionAt(prev.Address)
			}
			if s := sec; s != nil {
				end := min(row.Address, s.End())
				b.rows = append(b.rows, LineRow{Addr: prev.Address, End: end, File: name(prev.File), Line: prev.Line})
			}
		}
		if row.EndSequence {
			have = false
			continue
		}
		prev, have = row, true
	}
	return nil
}

func (b *lineBuilder) finish() *LineTable {
	slices.SortStableFunc(b.rows, func(x, y LineRow) int { return cmp.Compare(x.Addr, y.Addr) })
	// Overlapping sequences: the earlier row yields where a later one starts.
	out := b.rows[:0]
	overlaps := 0
	for _, r := range b.rows {
		if n := len(out); n > 0 && out[n-1].End > r.Addr {
			overlaps++
			out[n-1].End = r.Addr
			if out[n-1].End == out[n-1].Addr {
				out = out[:n-1]
			}
		}
		out = append(out, r)
	}
	return &LineTable{Rows: out, Overlaps: overlaps}
}
