package loader

import (
	"debug/dwarf"
	"sort"
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

func (b *lineBuilder) add(d *dwarf.Data, cu *dwarf.Entry) error {
	lr, err := d.LineReader(cu)
	if err != nil || lr == nil {
		return err
	}
	var prev dwarf.LineEntry
	have := false
	names := map[*dwarf.LineFile]string{}
	for {
		var le dwarf.LineEntry
		if err := lr.Next(&le); err != nil {
			break // io.EOF, or a corrupt program: keep what was read
		}
		if have && le.Address > prev.Address {
			// Thesis 4.3: rows outside executable sections are lies (discarded
			// COMDAT and garbage-collected code relocated to 0).
			if b.img.IsCode(prev.Address) {
				name := ""
				if prev.File != nil {
					n, ok := names[prev.File]
					if !ok {
						n = absFile(prev.File.Name, cu)
						names[prev.File] = n
					}
					name = n
				}
				end := le.Address
				if s := b.img.SectionAt(prev.Address); end > s.End() {
					end = s.End()
				}
				b.rows = append(b.rows, LineRow{Addr: prev.Address, End: end, File: name, Line: prev.Line})
			}
		}
		if le.EndSequence {
			have = false
			continue
		}
		prev, have = le, true
	}
	return nil
}

func (b *lineBuilder) finish() *LineTable {
	sort.SliceStable(b.rows, func(i, j int) bool { return b.rows[i].Addr < b.rows[j].Addr })
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
