package loader

import (
	"cmp"
	"slices"
)

// Corruption is one kind of inconsistent input that loading repaired or
// ignored: each such place can make the structure wrong, so the user is
// told where to look (Image.Corrupt).
type Corruption struct {
	Kind    string // what is wrong, in words (the Corrupt* constants)
	Section string // the ELF section holding the bad data, e.g. ".debug_info"
	// File is the separate debug file when Section is read from there,
	// else "" (the image itself).
	File string
	// Offset is the first place, the lowest offset within Section: the
	// same whatever the number of workers.
	Offset uint64
	Count  int // places found
}

// Kinds of corruption. Normal compiler and linker output is none of them:
// line rows of discarded code at address 0, overlapping line sequences
// (LineTable.Overlaps) and empty ranges are left out.
const (
	// A DW_AT_abstract_origin/DW_AT_specification chain that comes back
	// to an entry on it; the loop is cut where it closes.
	CorruptDeclCycle = "abstract_origin/specification cycle"
	// A chain longer than maxDeclDepth (compilers write at most three
	// levels: concrete, abstract, declaration); it is cut there.
	CorruptDeclDepth = "abstract_origin/specification chain too long"
	// A reference to no entry: past its section, inside a unit header, at
	// a null entry or at bytes that do not decode. Offset is the entry
	// holding the reference; the reference is ignored.
	CorruptBadRef = "reference to no entry"
	// A unit-relative reference (DW_FORM_ref1/2/4/8/udata) past the end
	// of its unit. It is followed all the same.
	CorruptRefOutsideUnit = "reference outside its unit"
	// DW_AT_call_line or a line row above maxLine. The value is kept.
	CorruptCallLine = "call line out of range"
	CorruptLine     = "line number out of range"
	// DW_AT_decl_line above maxLine (a procedure's or a class's, the line
	// of its P or of a lambda in it). The value is kept.
	CorruptDeclLine = "declaration line out of range"
	// A DW_AT_decl_file or DW_AT_call_file, or a line row's file, past its
	// unit's file table: the file is unknown (""), and the procedure,
	// inlined call or statement goes to the module's unknown file.
	// Offset is the entry's, or the line program's start.
	CorruptFileIndex = "file index past the file table"
	// A range list that does not decode; the entry's ranges are dropped
	// (a procedure without code, an inlined call that is not seen).
	CorruptRangeList = "unreadable range list"
	// DW_AT_high_pc or a range list's end below its start; the range is
	// dropped.
	CorruptRangeBackwards = "address range ends before it starts"
	// A range that starts in code and runs past the end of its section:
	// the code after it is taken for the procedure's.
	CorruptRangePastSection = "address range runs past its section"
	// A line program whose address goes down within a sequence; the rows
	// before the step back are cut at it. Offset is the program's start.
	CorruptLineBackwards = "line address goes backwards"
	// A line row that starts in code and runs past its section's end; it
	// is cut there. Offset is the program's start.
	CorruptLinePastSection = "line row runs past its section"
	// A line program that stops decoding; its rows up to there are kept.
	// Offset is the program's start.
	CorruptLineProgram = "line program cut short"
	// NVIDIA's inlined-call extension of a line program (nvcc 11.2 on)
	// damaged: an opcode whose operands do not fit in it or that runs past
	// the program (which stops there, its rows up to there kept), a call
	// site that is not an earlier row of the sequence (that row's code is
	// taken for the caller's), a nesting deeper than any compiler writes
	// (cut), or a callee name outside .debug_str (left unnamed). Offset is
	// the program's start.
	CorruptInlinedCall = "inlined-call line extension unreadable"
	// A function symbol whose size runs past its section's end; the
	// procedure ends at the section's end.
	CorruptSymbolSize = "symbol extends past its section"
	// An .eh_frame FDE whose range wraps around, starts outside the code
	// or runs past the end of its section. Offset is the FDE's. A
	// wrapping or outlying range is ignored, one running past its section
	// is kept and the procedure it bounds is cut at the section's end.
	CorruptFDERange = "FDE range outside the code"
	// An .eh_frame record that runs past the section, names no CIE, or
	// whose fields do not decode; it (or, when its length is bad, the
	// rest of the section) is ignored.
	CorruptEHRecord = "unreadable .eh_frame record"
	// An FDE's LSDA (its .gcc_except_table entry) that does not decode,
	// or names a landing pad outside the code: its landing pads are
	// dropped (calls in that procedure are not known to throw there).
	// Offset is the FDE's.
	CorruptLSDA = "unreadable LSDA"
)

// maxLine bounds plausible line numbers. No source file has a hundred
// million lines (generated ones reach a few million), and a corrupt 4-byte
// line is mostly far above it; bloop keeps lines in 32 bits.
const maxLine = 100_000_000

// tally counts corruption by kind and section. A walk of one compile unit,
// the symbol reader and the line-only reader each keep their own, merged
// once at the end, so counting takes no lock.
type tally []Corruption

// add counts one place; it is called only on paths that found bad data.
func (t *tally) add(kind, section string, off uint64) {
	t.addN(Corruption{Kind: kind, Section: section, Offset: off, Count: 1})
}

func (t *tally) addN(c Corruption) {
	for i := range *t {
		if x := &(*t)[i]; x.Kind == c.Kind && x.Section == c.Section && x.File == c.File {
			x.Count += c.Count
			x.Offset = min(x.Offset, c.Offset)
			return
		}
	}
	*t = append(*t, c)
}

// merge adds the counts of o.
func (t *tally) merge(o tally) {
	for _, c := range o {
		t.addN(c)
	}
}

// sorted is the tally in a stable order: by kind, then section and file.
func (t tally) sorted() []Corruption {
	if len(t) == 0 {
		return nil
	}
	out := slices.Clone(t)
	slices.SortFunc(out, func(a, b Corruption) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Section, b.Section), cmp.Compare(a.File, b.File))
	})
	return out
}
