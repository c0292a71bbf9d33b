package loader

import (
	"bytes"

	"bloop/dwarfscan"
	"bloop/structure"
)

// maxLineInlineDepth bounds the nesting of the inlined calls a line
// program describes. Templates nest a few dozen deep; a chain longer than
// this is corrupt (each row may only name an earlier one, so chains cannot
// loop, but they can be as long as the program).
const maxLineInlineDepth = 512

// lineInlines reads the inlined calls that NVIDIA's extension of the line
// program lp (at off in .debug_line) describes, and makes a procedure of
// each sequence that has some: the sequence's code, with its inline tree,
// as DWARF inline records would give it. files names lp's files as the
// line table does; str is .debug_str; dyninst reads call sites as
// hpcstruct does (Options.DyninstLineSites). Damaged inline data is counted
// in files.bad (CorruptInlinedCall); the program's own decoding errors
// were counted when its rows were read.
func (img *Image) lineInlines(lp *dwarfscan.LineProgram, off uint64, files *programFiles, str []byte, dyninst bool) []*Subprogram {
	r := &seqReader{img: img, off: off, files: files, str: str, bad: files.bad, dyninst: dyninst, callees: map[uint64]*Callee{}}
	r.base, _ = lp.FuncNameBase()
	lp.Reset()
	var out []*Subprogram
	var seq []dwarfscan.LineRow
	for {
		var row dwarfscan.LineRow
		err := lp.Next(&row)
		if err == nil {
			seq = append(seq, row)
		}
		if err != nil || row.EndSequence {
			// A sequence the program cut short still has its rows.
			if sp := r.sequence(seq); sp != nil {
				out = append(out, sp)
			}
			seq = seq[:0]
		}
		if err != nil {
			return out // a decoding error was counted as the rows were read
		}
	}
}

// seqReader builds the inline trees of one line program's sequences.
type seqReader struct {
	img     *Image
	off     uint64
	files   *programFiles
	str     []byte
	base    uint64
	bad     *tally
	dyninst bool
	callees map[uint64]*Callee // by function-name offset
}

// nvCall identifies an inlined call of a sequence: the call site's row,
// the callee, and the call it is nested in.
type nvCall struct {
	parent   *Inline
	site, fn uint64
}

// sequence makes the procedure of seq's code, or nil when no row of seq
// is inlined code or seq is not in the image's code (discarded code left
// at address 0).
func (r *seqReader) sequence(seq []dwarfscan.LineRow) *Subprogram {
	if len(seq) < 2 {
		return nil
	}
	sec := r.img.SectionAt(seq[0].Address)
	if sec == nil {
		return nil
	}
	nodes, top := r.calls(seq)
	for i, in := range nodes[:len(nodes)-1] {
		lo, hi := seq[i].Address, min(seq[i+1].Address, sec.End())
		if in != nil && lo < hi && lo >= sec.Addr {
			in.Ranges = append(in.Ranges, structure.Range{Lo: lo, Hi: hi})
		}
	}
	top = closeRanges(top)
	if len(top) == 0 {
		return nil
	}
	lo, hi := seq[0].Address, min(seq[len(seq)-1].Address, sec.End())
	for _, in := range top { // a sequence that goes backwards ends early
		hi = max(hi, in.Ranges[len(in.Ranges)-1].Hi)
	}
	return &Subprogram{Ranges: []structure.Range{{Lo: lo, Hi: hi}}, EntryPC: lo, Inlines: top, Offset: r.off}
}

// calls makes the inline tree of seq: the inlined call each row's code is
// in (nil: the procedure's own), and the outermost calls.
func (r *seqReader) calls(seq []dwarfscan.LineRow) (nodes, top []*Inline) {
	nodes = make([]*Inline, len(seq))
	depth := map[*Inline]int{}
	known := map[nvCall]*Inline{}
	for i, row := range seq {
		if row.Context == 0 || row.EndSequence {
			continue
		}
		if row.Context > uint64(i) {
			// The call site is a row before this one: a later row, the
			// row itself or one past the sequence is no call site.
			r.bad.add(CorruptInlinedCall, ".debug_line", r.off)
			continue
		}
		parent := nodes[row.Context-1]
		if depth[parent] >= maxLineInlineDepth {
			r.bad.add(CorruptInlinedCall, ".debug_line", r.off)
			nodes[i] = parent
			continue
		}
		k := nvCall{parent, row.Context, row.FuncName}
		in := known[k]
		if in == nil {
			site := r.site(seq, row.Context)
			in = &Inline{Callee: r.callee(row.FuncName), CallFile: r.files.name(site.File), CallLine: site.Line, CallIndex: -1}
			known[k], depth[in] = in, depth[parent]+1
			if parent == nil {
				top = append(top, in)
			} else {
				parent.Children = append(parent.Children, in)
			}
		}
		nodes[i] = in
	}
	return nodes, top
}

// site is the row of call site context (1-based) in seq: that row, as
// NVIDIA's extension says. hpcstruct 2023.08 takes the row after it when
// that row is not code inlined there: nvcc then opened the call with no
// row, went on in the caller and resumed the call later (quicksilver's
// CollisionEvent.cc:94, `_species[0]` on the line of its call, which
// hpcstruct puts on line 95, the caller's next row). Wherever the call's
// code follows its call site's row, as it does everywhere else in the
// reference cubins, both are one row.
func (r *seqReader) site(seq []dwarfscan.LineRow, context uint64) dwarfscan.LineRow {
	if r.dyninst && context < uint64(len(seq)) {
		if next := seq[context]; next.Context != context && !next.EndSequence {
			return next
		}
	}
	return seq[context-1]
}

// closeRanges gives every call the ranges of the calls nested in it, as
// DWARF's inline records have them, and drops the calls that cover no
// code (all of their rows empty).
func closeRanges(ins []*Inline) []*Inline {
	out := ins[:0]
	for _, in := range ins {
		in.Children = closeRanges(in.Children)
		for _, c := range in.Children {
			in.Ranges = append(in.Ranges, c.Ranges...)
		}
		in.Ranges = structure.MergeRanges(in.Ranges)
		if len(in.Ranges) > 0 {
			out = append(out, in)
		}
	}
	return out
}

// callee is the inlined function whose name is at offset fn from the
// program's base in .debug_str; a name outside it is counted and left "".
func (r *seqReader) callee(fn uint64) *Callee {
	if c, ok := r.callees[fn]; ok {
		return c
	}
	c := &Callee{}
	at := r.base + fn
	end := -1
	if at >= r.base && at < uint64(len(r.str)) {
		end = bytes.IndexByte(r.str[at:], 0)
	}
	if end < 0 {
		r.bad.add(CorruptInlinedCall, ".debug_line", r.off)
	} else {
		c.Name = string(r.str[at : at+uint64(end)])
		c.LinkName = c.Name
	}
	r.callees[fn] = c
	return c
}

// programFiles names a line program's files as its rows' files are named
// in the line table: the joined header table, then DW_LNE_define_file's.
type programFiles struct {
	lp      *dwarfscan.LineProgram
	joined  []string
	compDir string
	real    *realPaths
	bad     *tally
	off     uint64
}

func (f *programFiles) name(i int) string {
	if i >= 0 && i < len(f.joined) {
		return f.joined[i]
	}
	if all := f.lp.Files(); i >= 0 && i < len(all) {
		return fileIn(all[i], f.compDir, f.real)
	}
	f.bad.add(CorruptFileIndex, ".debug_line", f.off)
	return ""
}
