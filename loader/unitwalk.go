package loader

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"sort"

	"bloop/dwarfscan"
	"bloop/structure"
)

type descKey struct {
	file string
	line int
	name string
}

// unitWalk reads one compile unit: its procedures with code, their inline
// trees, the procedure descriptors it declares and its line rows.
type unitWalk struct {
	img   *Image // read only: which addresses are code
	d     *dwarfscan.Data
	files map[int][]string // file tables by unit index
	// file0Abs holds the units whose file table writes entry 0 as an
	// absolute path (dwarfscan.LineProgram.File0Absolute).
	file0Abs map[int]bool
	decls    map[uint64]*Callee
	descs    map[descKey]*Descriptor
	// lambdas maps a lambda operator()'s in-class entry to its
	// descriptor, for the out-of-line copy that refers to it.
	lambdas map[uint64]*Descriptor
	// seek reads the entries that declarations refer to, one Entry per
	// level of a specification/abstract-origin chain.
	noDesc bool       // Options.SkipDescriptors
	real   *realPaths // Options.RawFileNames: raw line programs, names spelled by real
	// whole returns the index over all of .debug_info when d, an index over
	// the part that had arrived, lacks the unit a reference points into.
	whole func() *dwarfscan.Data
	seek  *dwarfscan.Reader
	nest  *dwarfscan.Reader // reads the trees below procedures (dyninstDeclNames)
	// declNames collects Subprogram.DyninstDeclNames (Options.DyninstDeclNames).
	declNames bool
	entries   [maxDeclDepth + 1]dwarfscan.Entry
	// chain holds the entries being read by fillDecl, by depth: a
	// reference back to one of them closes a cycle.
	chain [maxDeclDepth + 1]uint64
	rbuf  []structure.Range

	// What the unit contributes, in the order it was found.
	descList []*Descriptor
	procs    []*Subprogram
	lines    lineBuilder
	warnings []string
	bad      tally  // corrupt data found in the unit
	ui       int    // the unit walked
	name     string // its DW_AT_name
}

// noCallee is the callee of an inline record without an abstract origin.
var noCallee Callee

// maxDeclDepth bounds specification/abstract-origin chains, which
// compilers make three levels deep at most.
const maxDeclDepth = 8

func newUnitWalk(img *Image, d *dwarfscan.Data) *unitWalk {
	w := &unitWalk{img: img, d: d, files: map[int][]string{}, file0Abs: map[int]bool{}, decls: map[uint64]*Callee{},
		descs: map[descKey]*Descriptor{}, lambdas: map[uint64]*Descriptor{}, seek: d.Reader(), lines: lineBuilder{img: img}}
	w.lines.bad = &w.bad
	return w
}

// walk reads unit ui; a unit that cannot be read is reported and what was
// read of it dropped.
func (w *unitWalk) walk(ui int) {
	u := &w.d.Units()[ui]
	w.ui = ui
	defer func() {
		if x := recover(); x != nil {
			w.descList, w.procs, w.lines.rows = nil, nil, nil
			w.warnings = append(w.warnings, fmt.Sprintf("compile unit at %#x skipped: internal error (%v)", u.Offset, x))
		}
	}()
	// The line program's header is read once, for the file names of the
	// entries and for the rows.
	lp, lpErr := w.lineProgram(u)
	w.files[ui] = joinFiles(lp, u.CompDir, w.real)
	w.file0Abs[ui] = lp != nil && lp.File0Absolute()
	if err := w.unit(ui); err != nil {
		w.warnings = append(w.warnings, fmt.Sprintf("compile unit at %#x skipped: %v", u.Offset, err))
	}
	if lpErr != nil {
		w.warnings = append(w.warnings, fmt.Sprintf("line table of unit at %#x: %v", u.Offset, lpErr))
	}
	if lp != nil {
		w.lines.add(lp, uint64(u.StmtList), w.files[ui], u.CompDir, w.real)
	}
	w.lines.sortRows()
}

// fileTable is unit ui's file names, by the index DW_AT_decl_file and
// DW_AT_call_file give.
func (w *unitWalk) fileTable(ui int) []string {
	if ui < 0 {
		return nil
	}
	if t, ok := w.files[ui]; ok {
		return t
	}
	u := &w.d.Units()[ui]
	lp, _ := w.lineProgram(u)
	t := joinFiles(lp, u.CompDir, w.real)
	w.files[ui] = t
	return t
}

// lineProgram is unit u's line program, with libdw's names if w.real is
// set.
func (w *unitWalk) lineProgram(u *dwarfscan.Unit) (*dwarfscan.LineProgram, error) {
	if w.real != nil {
		return w.d.RawLineProgram(u)
	}
	return w.d.LineProgram(u)
}

// joinFiles is a line program's file table with each name made absolute
// (fileIn).
func joinFiles(lp *dwarfscan.LineProgram, compDir string, real *realPaths) []string {
	if lp == nil {
		return nil
	}
	files := lp.Files()
	t := make([]string, len(files))
	for i, f := range files {
		t[i] = fileIn(f, compDir, real)
	}
	return t
}

// absFile joins a relative file name with the unit's compilation
// directory, which DWARF 5 directory entries such as "." leave relative.
func absFile(name, compDir string) string {
	if name == "" || path.IsAbs(name) {
		return name
	}
	if path.IsAbs(compDir) {
		return path.Join(compDir, name)
	}
	return name
}

// fileName is entry i of the unit's file table, or "" when there is none.
// An index past a non-empty table is counted as corrupt at the entry at;
// a unit without a file table (no line program, or one that did not
// read) was counted where the table was read.
func (w *unitWalk) fileName(tab []string, i int64, ok bool, at uint64) string {
	if !ok {
		return ""
	}
	if i < 0 || i >= int64(len(tab)) {
		if len(tab) > 0 {
			w.bad.add(CorruptFileIndex, ".debug_info", at)
		}
		return ""
	}
	return tab[i]
}

// checkLine counts a line attribute above maxLine (negative ones too) as
// corrupt of kind at the entry at.
func (w *unitWalk) checkLine(kind string, l int64, at uint64) {
	if uint64(l) > maxLine {
		w.bad.add(kind, ".debug_info", at)
	}
}

// decl resolves name, linkage name and declaration through
// DW_AT_specification and DW_AT_abstract_origin chains; from is the entry
// that refers to off, where bad references are counted.
func (w *unitWalk) decl(off uint64, depth int, from uint64) *Callee {
	if di, ok := w.decls[off]; ok {
		// An entry still being read is on the chain: the reference loops
		// (depth 0, from an inlined call, has no chain yet).
		if depth > 0 && slices.Contains(w.chain[:depth], off) {
			w.bad.add(CorruptDeclCycle, ".debug_info", from)
		}
		return di
	}
	di := &Callee{}
	w.decls[off] = di
	if depth > maxDeclDepth {
		w.bad.add(CorruptDeclDepth, ".debug_info", from)
		return di
	}
	e := &w.entries[depth]
	w.cover(off)
	if w.seek.Seek(off) != nil || w.seek.Next(e) != nil || e.Tag == 0 {
		w.bad.add(CorruptBadRef, ".debug_info", from)
		return di
	}
	w.fillDecl(di, e, w.d.UnitOf(off), depth)
	return di
}

// fillDecl reads e (of unit ui) into di. Name and linkage name come from
// the same entry, the first in the specification/abstract-origin chain
// that has a name: that is what hpcstruct shows (clang puts linkage names
// of constructors and lambdas on the abstract instance but names on the
// declaration).
func (w *unitWalk) fillDecl(di *Callee, e *dwarfscan.Entry, ui, depth int) {
	w.chain[depth] = e.Offset
	named := false
	if n, ok := e.String(dwarfscan.AttrName); ok {
		di.Name, di.LinkName, named = n, linkageName(e), true
	}
	if l, ok := e.Int(dwarfscan.AttrDeclLine); ok {
		di.DeclLine = int(l)
		w.checkLine(CorruptDeclLine, l, e.Offset)
	}
	if _, ok := e.Field(dwarfscan.AttrDeclFile); ok {
		i, ok := e.Int(dwarfscan.AttrDeclFile)
		di.DeclFile = w.fileName(w.fileTable(ui), i, ok, e.Offset)
	}
	// The chain is followed after e is read: the next level reuses no
	// Entry of this one, but e's values are taken first all the same.
	u := &w.d.Units()[ui]
	spec, hasSpec := w.ref(u, e, dwarfscan.AttrSpecification)
	origin, hasOrigin := w.ref(u, e, dwarfscan.AttrAbstractOrigin)
	if n, ok := e.String(dwarfscan.AttrLinkageName); ok {
		di.DyninstName = n
	} else if n, ok := e.String(dwarfscan.AttrName); ok {
		di.DyninstName = n
	}
	for _, o := range []struct {
		off uint64
		ok  bool
	}{{origin, hasOrigin}, {spec, hasSpec}} {
		if !o.ok {
			continue
		}
		up := w.decl(o.off, depth+1, e.Offset)
		if up.DyninstName != "" { // a later name wins
			di.DyninstName = up.DyninstName
		}
		if !named && up.Name != "" {
			di.Name, di.LinkName, named = up.Name, up.LinkName, true
		}
		if di.DeclLine == 0 {
			di.DeclLine, di.DeclFile = up.DeclLine, up.DeclFile
		} else if di.DeclFile == "" {
			// clang's out-of-class definition gives its line and leaves
			// the file to the declaration it specifies.
			di.DeclFile = up.DeclFile
		}
	}
}

// cover makes w.d the index over all of .debug_info when the part that
// had arrived lacks the unit holding off. The same units and more: what
// was read stays as it was; the readers start over on the new index.
func (w *unitWalk) cover(off uint64) {
	if w.d.UnitOf(off) < 0 && w.whole != nil {
		w.d, w.whole = w.whole(), nil
		w.seek, w.nest = w.d.Reader(), nil
	}
}

// ref is e's reference attribute a. A unit-relative reference past the
// end of u, e's unit, is counted and followed all the same: the range test
// is all the valid case pays.
func (w *unitWalk) ref(u *dwarfscan.Unit, e *dwarfscan.Entry, a dwarfscan.Attr) (uint64, bool) {
	o, ok := e.Ref(a)
	if ok && (o < u.Offset || o >= u.End) {
		switch f, _ := e.Field(a); f.Form {
		case dwarfscan.FormRef1, dwarfscan.FormRef2, dwarfscan.FormRef4, dwarfscan.FormRef8, dwarfscan.FormRefUdata:
			w.bad.add(CorruptRefOutsideUnit, ".debug_info", e.Offset)
		}
	}
	return o, ok
}

// linkageName is e's DW_AT_linkage_name, else the older
// DW_AT_MIPS_linkage_name (nvcc's, up to DWARF 3's gcc and clang).
func linkageName(e *dwarfscan.Entry) string {
	if n, ok := e.String(dwarfscan.AttrLinkageName); ok {
		return n
	}
	if n, ok := e.String(dwarfscan.AttrMIPSLinkageName); ok {
		return n
	}
	return ""
}

// entryPC is a procedure's entry: DW_AT_low_pc, DW_AT_entry_pc, else the
// first range listed (the hot part, where gcc lists it first).
func (w *unitWalk) entryPC(u *dwarfscan.Unit, e *dwarfscan.Entry, sorted []structure.Range) uint64 {
	for _, a := range []dwarfscan.Attr{dwarfscan.AttrLowPC, dwarfscan.AttrEntryPC} {
		if v, ok := e.Addr(a); ok && v != 0 {
			return v
		}
	}
	if rs, err := w.d.Ranges(u, e, w.rbuf[:0]); err == nil {
		w.rbuf = rs
		for _, x := range rs {
			if x.Hi > x.Lo && w.img.IsCode(x.Lo) {
				return x.Lo
			}
		}
	}
	return sorted[0].Lo
}

// ranges are e's non-empty address ranges in code, sorted. Ranges that
// start outside the code are the linker's leftovers of discarded code
// (relocated to 0, or a tombstone from which the length wraps); one that
// starts in code and ends before its start or past its section is
// corrupt.
func (w *unitWalk) ranges(u *dwarfscan.Unit, e *dwarfscan.Entry) []structure.Range {
	rs, err := w.d.Ranges(u, e, w.rbuf[:0])
	if err != nil {
		// A list offset or index out of range is the entry's fault; a
		// list that does not decode is its section's.
		if de := (*dwarfscan.DecodeError)(nil); errors.As(err, &de) && !errors.Is(err, dwarfscan.ErrBadOffset) {
			w.bad.add(CorruptRangeList, de.Section, de.Offset)
		} else {
			w.bad.add(CorruptRangeList, ".debug_info", e.Offset)
		}
		return nil
	}
	w.rbuf = rs
	var out []structure.Range
	for _, x := range rs {
		s := w.img.SectionAt(x.Lo)
		if s == nil || x.Hi == x.Lo {
			continue
		}
		if x.Hi < x.Lo {
			w.bad.add(CorruptRangeBackwards, ".debug_info", e.Offset)
			continue
		}
		if x.Hi > s.End() {
			w.bad.add(CorruptRangePastSection, ".debug_info", e.Offset)
		}
		out = append(out, structure.Range{Lo: x.Lo, Hi: x.Hi})
	}
	sortRanges(out)
	return out
}

// lambdaOf is the lambda descriptor an out-of-line operator() refers to.
// gcc emits the closure type in the enclosing function first, so the
// descriptor is known when its code is reached.
func (w *unitWalk) lambdaOf(e *dwarfscan.Entry) *Descriptor {
	for _, a := range []dwarfscan.Attr{dwarfscan.AttrSpecification, dwarfscan.AttrAbstractOrigin} {
		if o, ok := e.Ref(a); ok && w.lambdas[o] != nil {
			return w.lambdas[o]
		}
	}
	return nil
}

// descriptor records a procedure descriptor once per (file, line, name).
func (w *unitWalk) descriptor(di *Callee, parent *Descriptor) *Descriptor {
	if di.Name == "" || di.DeclLine == 0 || di.DeclFile == "" {
		return nil
	}
	key := descKey{di.DeclFile, di.DeclLine, di.Name}
	if d, ok := w.descs[key]; ok {
		return d
	}
	d := &Descriptor{Name: di.Name, File: di.DeclFile, Line: di.DeclLine, Parent: parent}
	w.descs[key] = d
	w.descList = append(w.descList, d)
	return d
}

// frame is what a child entry attaches to.
type frame struct {
	sub     *Subprogram
	in      *Inline
	desc    *Descriptor // lexically enclosing procedure descriptor
	inClass bool        // inside a class or structure type
	// The enclosing class's declaration: gcc marks a lambda's operator()
	// artificial and gives it no line; its closure type carries the
	// lambda's position.
	classFile string
	classLine int
	classAnon bool // closure types have no name
}

// unit walks unit ui, collecting procedures with code and their inline trees.
func (w *unitWalk) unit(ui int) error {
	files := w.fileTable(ui)
	rd := w.d.Reader()
	rd.SeekUnit(ui)
	u := rd.Unit()
	var e dwarfscan.Entry
	if err := rd.Next(&e); err != nil || !e.Children {
		return err
	}
	w.name, _ = e.String(dwarfscan.AttrName)
	stack := []frame{{}}
	for len(stack) > 0 {
		if err := rd.Next(&e); err != nil {
			return eofOK(err)
		}
		if e.Tag == 0 { // end of a sibling list
			stack = stack[:len(stack)-1]
			continue
		}
		top := stack[len(stack)-1]
		next := top
		switch e.Tag {
		case dwarfscan.TagSubprogram:
			next = w.subprogram(u, ui, &e, top)
		case dwarfscan.TagInlinedSubroutine:
			next = w.inlined(u, files, &e, top)
		case dwarfscan.TagLexicalBlock, dwarfscan.TagTryBlock, dwarfscan.TagCatchBlock:
			// transparent: inlines inside blocks belong to the enclosing scope
		case dwarfscan.TagCompileUnit, dwarfscan.TagPartialUnit:
			return nil
		case dwarfscan.TagNamespace, dwarfscan.TagModule:
			// keep walking: member functions and module procedures are inside
		case dwarfscan.TagClassType, dwarfscan.TagStructType:
			next.inClass = true
			next.classFile, next.classLine = "", 0
			_, named := e.String(dwarfscan.AttrName)
			next.classAnon = !named
			if l, ok := e.Int(dwarfscan.AttrDeclLine); ok {
				i, ok := e.Int(dwarfscan.AttrDeclFile)
				next.classFile, next.classLine = w.fileName(files, i, ok, e.Offset), int(l)
				w.checkLine(CorruptDeclLine, l, e.Offset)
			}
		default:
			// types and variables attach to no procedure
			if e.Children {
				rd.SkipChildren()
			}
			continue
		}
		if e.Children {
			stack = append(stack, next)
		}
	}
	return nil
}

func (w *unitWalk) subprogram(u *dwarfscan.Unit, ui int, e *dwarfscan.Entry, top frame) frame {
	rs := w.ranges(u, e)
	if len(rs) == 0 && w.noDesc {
		return frame{} // declarations and abstract instances own no code
	}
	di := &Callee{}
	w.fillDecl(di, e, ui, 0)
	lambda := top.inClass && top.classAnon && di.Name == "operator()"
	if lambda && di.DeclLine == 0 {
		di.DeclFile, di.DeclLine = top.classFile, top.classLine
	}
	var d *Descriptor
	if !w.noDesc {
		d = w.describe(e, di, top, lambda)
	}
	if len(rs) == 0 {
		return frame{desc: d}
	}
	if d != nil {
		d.HasCode = true
	}
	sp := &Subprogram{Name: di.Name, LinkName: di.LinkName, DeclFile: di.DeclFile, DeclLine: di.DeclLine, Ranges: rs, Parent: top.sub, Offset: e.Offset, Desc: d}
	if w.declNames {
		sp.DyninstDeclNames = w.dyninstDeclNames(e)
	}
	sp.EntryPC = w.entryPC(u, e, rs)
	if u.StmtList >= 0 {
		sp.lineUnit = uint64(u.StmtList) + 1
	}
	w.procs = append(w.procs, sp)
	return frame{sub: sp, desc: d}
}

// describe returns the procedure descriptor of subprogram e, or nil.
// Prototypes of external routines (a declaration outside any class;
// gfortran puts them at the first call) and artificial procedures say
// nothing about where source procedures are.
func (w *unitWalk) describe(e *dwarfscan.Entry, di *Callee, top frame, lambda bool) *Descriptor {
	var d *Descriptor
	decl := e.Flag(dwarfscan.AttrDeclaration)
	art := e.Flag(dwarfscan.AttrArtificial)
	if lambda || !art && (!decl || top.inClass) {
		d = w.descriptor(di, top.desc)
		if d != nil && top.inClass {
			d.Member = true
		}
		if d != nil && lambda {
			d.Lambda = true
			w.lambdas[e.Offset] = d
		}
	}
	if d == nil && di.DeclLine == 0 {
		d = w.lambdaOf(e)
	}
	return d
}

func (w *unitWalk) inlined(u *dwarfscan.Unit, files []string, e *dwarfscan.Entry, top frame) frame {
	if top.sub == nil {
		return frame{}
	}
	in := &Inline{Callee: &noCallee, Ranges: w.ranges(u, e), CallIndex: -1}
	// Read e's own attributes before decl reads other entries.
	i, ok := e.Int(dwarfscan.AttrCallFile)
	in.CallFile = w.fileName(files, i, ok, e.Offset)
	if ok && i >= 0 && i <= math.MaxInt32 {
		in.CallIndex = int32(i)
	}
	if l, ok := e.Int(dwarfscan.AttrCallLine); ok {
		in.CallLine = int(l)
		w.checkLine(CorruptCallLine, l, e.Offset)
	}
	if f, ok := e.Field(dwarfscan.AttrCallFile); ok && f.Form == dwarfscan.FormImplicitConst {
		in.CallUnknown = true
	}
	if o, ok := w.ref(u, e, dwarfscan.AttrAbstractOrigin); ok {
		in.Callee = w.decl(o, 0, e.Offset)
	}
	if len(in.Ranges) == 0 {
		return frame{sub: top.sub, in: top.in, desc: top.desc}
	}
	if top.in != nil {
		top.in.Children = append(top.in.Children, in)
	} else {
		top.sub.Inlines = append(top.sub.Inlines, in)
	}
	return frame{sub: top.sub, in: in, desc: top.desc}
}

func eofOK(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// sortRanges orders by start address; most lists have one range.
func sortRanges(rs []structure.Range) {
	if len(rs) > 1 {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Lo < rs[j].Lo })
	}
}
