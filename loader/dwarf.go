package loader

import (
	"debug/dwarf"
	"fmt"
	"path"
	"sort"

	"bloop/par"
)

// Subprogram is a DWARF procedure descriptor that owns code.
type Subprogram struct {
	Name     string // DW_AT_name (through specification/abstract_origin)
	LinkName string // DW_AT_linkage_name, or ""
	DeclFile string
	DeclLine int
	Ranges   []Range // sorted
	Inlines  []*Inline
	Parent   *Subprogram // lexically enclosing procedure (Fortran contains, local classes)
	Offset   dwarf.Offset
	EntryPC  uint64 // DW_AT_low_pc, DW_AT_entry_pc, or the first range listed (the hot part)
	Desc     *Descriptor
}

// Descriptor is a procedure as the source declares it: every DWARF
// subprogram with a name and a begin line, with or without code (the
// thesis's procedure hierarchy, including instantiate-DWARF-descriptors).
type Descriptor struct {
	Name    string
	File    string
	Line    int
	Parent  *Descriptor // lexically enclosing procedure (Fortran contains)
	HasCode bool
	Member  bool // a member function declared in a class
	Lambda  bool // the operator() of a lambda's closure type
}

// Entry is the procedure's entry address (not its lowest: a cold part may lie below).
func (p *Subprogram) Entry() uint64 { return p.EntryPC }

// Inline is one DW_TAG_inlined_subroutine: a call site and the callee's code.
type Inline struct {
	Name     string // callee DW_AT_name
	LinkName string // callee DW_AT_linkage_name
	DeclFile string
	DeclLine int
	CallFile string
	CallLine int
	// CallUnknown marks a call site whose file hpcstruct (Dyninst) cannot read:
	// DW_AT_call_file encoded as DW_FORM_implicit_const, as gcc 12 emits in DWARF 5.
	CallUnknown bool
	Ranges      []Range // sorted
	Children    []*Inline
}

func (in *Inline) contains(a uint64) bool { return rangesContain(in.Ranges, a) }

// InlineChain returns the inlined calls that cover addr, outermost first.
func (p *Subprogram) InlineChain(addr uint64, buf []*Inline) []*Inline {
	buf = buf[:0]
	list := p.Inlines
	for {
		var next *Inline
		for _, in := range list {
			if in.contains(addr) {
				next = in
				break
			}
		}
		if next == nil {
			return buf
		}
		buf = append(buf, next)
		list = next.Children
	}
}

type declInfo struct {
	name, link, file string
	line             int
}

// dwarfReader walks one compile unit. Units are walked independently, in
// parallel, and merged in their order (mergeUnits), so the result does not
// depend on the number of workers.
type dwarfReader struct {
	img    *Image         // read only: which addresses are code
	d      *dwarf.Data    // shared, read only
	cus    []*dwarf.Entry // all compile units by offset, shared
	quirks *abbrevQuirks
	files  map[dwarf.Offset][]string
	decls  map[dwarf.Offset]*declInfo
	descs  map[descKey]*Descriptor
	// lambdas maps a lambda operator()'s in-class entry to its
	// descriptor, for the out-of-line copy that refers to it.
	lambdas map[dwarf.Offset]*Descriptor

	// What the unit contributes, in the order it was found.
	descList []*Descriptor
	procs    []*Subprogram
	lines    lineBuilder
	warnings []string
}

func (img *Image) readDWARF(d *dwarf.Data, secs map[string][]byte, workers int) error {
	quirks := newAbbrevQuirks(secs["info"], secs["abbrev"])
	// The units' root entries, found from their headers: a walk from one
	// unit to the next decodes every entry when there is no DW_AT_sibling.
	var cus []*dwarf.Entry
	rd := d.Reader()
	for _, u := range quirks.units {
		rd.Seek(dwarf.Offset(u.first))
		e, err := rd.Next()
		if err != nil {
			return fmt.Errorf("DWARF: %v", err)
		}
		if e != nil && (e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit) {
			cus = append(cus, e)
		}
	}
	units := make([]*dwarfReader, len(cus))
	par.For(workers, len(cus), func(i int) {
		r := &dwarfReader{img: img, d: d, cus: cus, quirks: quirks, files: map[dwarf.Offset][]string{}, decls: map[dwarf.Offset]*declInfo{}, descs: map[descKey]*Descriptor{}, lambdas: map[dwarf.Offset]*Descriptor{}}
		r.lines.img = img
		r.walk(cus[i])
		units[i] = r
	})
	img.mergeUnits(units)
	return nil
}

// walk reads one unit's procedures and line rows; a unit that cannot be
// read (or that debug/dwarf panics on) is reported and skipped.
func (r *dwarfReader) walk(cu *dwarf.Entry) {
	defer func() {
		if x := recover(); x != nil {
			r.descList, r.procs, r.lines.rows = nil, nil, nil
			r.warnings = append(r.warnings, fmt.Sprintf("compile unit at %#x skipped: malformed DWARF (%v)", cu.Offset, x))
		}
	}()
	if err := r.unit(cu); err != nil {
		r.warnings = append(r.warnings, fmt.Sprintf("compile unit at %#x skipped: %v", cu.Offset, err))
	}
	if err := r.lines.add(r.d, cu); err != nil {
		r.warnings = append(r.warnings, fmt.Sprintf("line table of unit at %#x: %v", cu.Offset, err))
	}
}

// mergeUnits joins the units' findings in unit order. A descriptor is one
// per (file, line, name) across the image: the first unit's, with the flags
// every unit found for it.
func (img *Image) mergeUnits(units []*dwarfReader) {
	nd, nr, np := 0, 0, 0
	for _, u := range units {
		nd, nr, np = nd+len(u.descList), nr+len(u.lines.rows), np+len(u.procs)
	}
	canon := make(map[*Descriptor]*Descriptor, nd)
	byKey := make(map[descKey]*Descriptor, nd)
	lt := &lineBuilder{img: img, rows: make([]LineRow, 0, nr)}
	img.Procs = make([]*Subprogram, 0, np)
	for _, u := range units {
		for _, d := range u.descList {
			k := descKey{d.File, d.Line, d.Name}
			c, ok := byKey[k]
			if !ok {
				byKey[k] = d
				img.Descriptors = append(img.Descriptors, d)
				c = d
			} else {
				c.HasCode = c.HasCode || d.HasCode
				c.Member = c.Member || d.Member
				c.Lambda = c.Lambda || d.Lambda
			}
			canon[d] = c
		}
		lt.rows = append(lt.rows, u.lines.rows...)
		img.Warnings = append(img.Warnings, u.warnings...)
	}
	for _, d := range img.Descriptors {
		if d.Parent != nil {
			d.Parent = canon[d.Parent]
		}
	}
	for _, u := range units {
		for _, p := range u.procs {
			if p.Desc != nil {
				p.Desc = canon[p.Desc]
			}
			img.Procs = append(img.Procs, p)
		}
	}
	img.Lines = lt.finish()
}

// cuOf returns the compile unit holding the entry at off.
func (r *dwarfReader) cuOf(off dwarf.Offset) *dwarf.Entry {
	i := sort.Search(len(r.cus), func(i int) bool { return r.cus[i].Offset > off }) - 1
	if i < 0 {
		return nil
	}
	return r.cus[i]
}

func (r *dwarfReader) fileTable(cu *dwarf.Entry) []string {
	if cu == nil {
		return nil
	}
	if t, ok := r.files[cu.Offset]; ok {
		return t
	}
	var t []string
	if lr, err := r.d.LineReader(cu); err == nil && lr != nil {
		for _, f := range lr.Files() {
			if f == nil {
				t = append(t, "")
			} else {
				t = append(t, absFile(f.Name, cu))
			}
		}
	}
	r.files[cu.Offset] = t
	return t
}

// absFile joins a relative file name with the unit's compilation
// directory: debug/dwarf does not for DWARF 5 directory entries such as ".".
func absFile(name string, cu *dwarf.Entry) string {
	if name == "" || path.IsAbs(name) {
		return name
	}
	if dir, ok := cu.Val(dwarf.AttrCompDir).(string); ok && path.IsAbs(dir) {
		return path.Join(dir, name)
	}
	return name
}

func fileName(tab []string, v any) string {
	i, ok := v.(int64)
	if !ok || i < 0 || int(i) >= len(tab) {
		return ""
	}
	return tab[i]
}

// decl resolves name, linkage name and declaration through
// DW_AT_specification and DW_AT_abstract_origin chains (bounded, as cycles occur in bad DWARF).
func (r *dwarfReader) decl(off dwarf.Offset, depth int) *declInfo {
	if di, ok := r.decls[off]; ok {
		return di
	}
	di := &declInfo{}
	r.decls[off] = di
	if depth > 8 {
		return di
	}
	rd := r.d.Reader()
	rd.Seek(off)
	e, err := rd.Next()
	if err != nil || e == nil {
		return di
	}
	r.fillDecl(di, e, depth)
	return di
}

func (r *dwarfReader) fillDecl(di *declInfo, e *dwarf.Entry, depth int) {
	// Name and linkage name come from the same entry, the first in the
	// specification/abstract-origin chain that has a name: that is what
	// hpcstruct shows (clang puts linkage names of constructors and lambdas
	// on the abstract instance but names on the declaration).
	named := false
	if n, ok := e.Val(dwarf.AttrName).(string); ok {
		di.name, di.link, named = n, linkageName(e), true
	}
	if l, ok := e.Val(dwarf.AttrDeclLine).(int64); ok {
		di.line = int(l)
	}
	if v := e.Val(dwarf.AttrDeclFile); v != nil {
		di.file = fileName(r.fileTable(r.cuOf(e.Offset)), v)
	}
	for _, a := range []dwarf.Attr{dwarf.AttrSpecification, dwarf.AttrAbstractOrigin} {
		if o, ok := e.Val(a).(dwarf.Offset); ok {
			up := r.decl(o, depth+1)
			if !named && up.name != "" {
				di.name, di.link, named = up.name, up.link, true
			}
			if di.line == 0 {
				di.line, di.file = up.line, up.file
			}
		}
	}
}

func linkageName(e *dwarf.Entry) string {
	if n, ok := e.Val(dwarf.AttrLinkageName).(string); ok {
		return n
	}
	if n, ok := e.Val(dwarf.Attr(0x2007)).(string); ok {
		return n
	}
	return ""
}

func (r *dwarfReader) entryPC(e *dwarf.Entry, sorted []Range) uint64 {
	for _, a := range []dwarf.Attr{dwarf.AttrLowpc, dwarf.AttrEntrypc} {
		if v, ok := e.Val(a).(uint64); ok && v != 0 {
			return v
		}
	}
	if rs, err := r.d.Ranges(e); err == nil {
		for _, x := range rs {
			if x[1] > x[0] && r.img.IsCode(x[0]) {
				return x[0]
			}
		}
	}
	return sorted[0].Lo
}

func (r *dwarfReader) ranges(e *dwarf.Entry) []Range {
	rs, err := r.d.Ranges(e)
	if err != nil {
		return nil
	}
	var out []Range
	for _, x := range rs {
		if x[1] > x[0] && r.img.IsCode(x[0]) {
			out = append(out, Range{x[0], x[1]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Lo < out[j].Lo })
	return out
}

// lambdaOf is the lambda descriptor an out-of-line operator() refers to.
// gcc emits the closure type in the enclosing function first, so the
// descriptor is known when its code is reached.
func (r *dwarfReader) lambdaOf(e *dwarf.Entry) *Descriptor {
	for _, a := range []dwarf.Attr{dwarf.AttrSpecification, dwarf.AttrAbstractOrigin} {
		if o, ok := e.Val(a).(dwarf.Offset); ok && r.lambdas[o] != nil {
			return r.lambdas[o]
		}
	}
	return nil
}

// descriptor records a procedure descriptor once per (file, line, name).
func (r *dwarfReader) descriptor(di *declInfo, parent *Descriptor) *Descriptor {
	if di.name == "" || di.line == 0 || di.file == "" {
		return nil
	}
	key := descKey{di.file, di.line, di.name}
	if d, ok := r.descs[key]; ok {
		return d
	}
	d := &Descriptor{Name: di.name, File: di.file, Line: di.line, Parent: parent}
	r.descs[key] = d
	r.descList = append(r.descList, d)
	return d
}

type descKey struct {
	file string
	line int
	name string
}

// unit walks one compile unit, collecting procedures with code and their inline trees.
func (r *dwarfReader) unit(cu *dwarf.Entry) error {
	files := r.fileTable(cu)
	rd := r.d.Reader()
	rd.Seek(cu.Offset)
	if _, err := rd.Next(); err != nil {
		return err
	}
	if !cu.Children {
		return nil
	}
	// Each stack slot is what a child entry attaches to.
	type frame struct {
		sub     *Subprogram
		in      *Inline
		desc    *Descriptor // lexically enclosing procedure descriptor
		inClass bool        // inside a class or structure type
		// The enclosing class's declaration: gcc marks a lambda's
		// operator() artificial and gives it no line; its closure type
		// carries the lambda's position.
		classFile string
		classLine int
		classAnon bool // closure types have no name
	}
	stack := []frame{{}}
	for len(stack) > 0 {
		e, err := rd.Next()
		if err != nil {
			return err
		}
		if e == nil {
			return nil
		}
		if e.Tag == 0 { // end of a sibling list
			stack = stack[:len(stack)-1]
			continue
		}
		top := stack[len(stack)-1]
		next := top
		switch e.Tag {
		case dwarf.TagSubprogram:
			di := &declInfo{}
			r.fillDecl(di, e, 0)
			var d *Descriptor
			// Prototypes of external routines (a declaration outside any
			// class; gfortran puts them at the first call) and artificial
			// procedures say nothing about where source procedures are.
			decl, _ := e.Val(dwarf.AttrDeclaration).(bool)
			art, _ := e.Val(dwarf.AttrArtificial).(bool)
			lambda := top.inClass && top.classAnon && di.name == "operator()"
			if lambda && di.line == 0 {
				di.file, di.line = top.classFile, top.classLine
			}
			if lambda || !art && (!decl || top.inClass) {
				d = r.descriptor(di, top.desc)
				if d != nil && top.inClass {
					d.Member = true
				}
				if d != nil && lambda {
					d.Lambda = true
					r.lambdas[e.Offset] = d
				}
			}
			if d == nil && di.line == 0 {
				d = r.lambdaOf(e)
			}
			rs := r.ranges(e)
			if len(rs) == 0 {
				next = frame{desc: d} // declarations and abstract instances own no code
				break
			}
			if d != nil {
				d.HasCode = true
			}
			sp := &Subprogram{Name: di.name, LinkName: di.link, DeclFile: di.file, DeclLine: di.line, Ranges: rs, Parent: top.sub, Offset: e.Offset, Desc: d}
			sp.EntryPC = r.entryPC(e, rs)
			r.procs = append(r.procs, sp)
			next = frame{sub: sp, desc: d}
		case dwarf.TagInlinedSubroutine:
			if top.sub == nil {
				next = frame{}
				break
			}
			in := &Inline{Ranges: r.ranges(e)}
			if o, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset); ok {
				di := r.decl(o, 0)
				in.Name, in.LinkName, in.DeclFile, in.DeclLine = di.name, di.link, di.file, di.line
			}
			in.CallFile = fileName(files, e.Val(dwarf.AttrCallFile))
			if l, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
				in.CallLine = int(l)
			}
			in.CallUnknown = r.quirks.callFileImplicit(e.Offset)
			if len(in.Ranges) == 0 {
				next = frame{sub: top.sub, in: top.in, desc: top.desc}
				break
			}
			if top.in != nil {
				top.in.Children = append(top.in.Children, in)
			} else {
				top.sub.Inlines = append(top.sub.Inlines, in)
			}
			next = frame{sub: top.sub, in: in, desc: top.desc}
		case dwarf.TagLexDwarfBlock, dwarf.TagTryDwarfBlock, dwarf.TagCatchDwarfBlock:
			// transparent: inlines inside blocks belong to the enclosing scope
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit:
			return nil
		default:
			// types, variables and namespaces: keep walking so that
			// member functions defined in classes or namespaces are found,
			// but they attach to no procedure.
			if e.Tag != dwarf.TagNamespace && e.Tag != dwarf.TagClassType && e.Tag != dwarf.TagStructType && e.Tag != dwarf.TagModule {
				if e.Children {
					rd.SkipChildren()
				}
				continue
			}
			if e.Tag == dwarf.TagClassType || e.Tag == dwarf.TagStructType {
				next.inClass = true
				next.classFile, next.classLine = "", 0
				_, named := e.Val(dwarf.AttrName).(string)
				next.classAnon = !named
				if l, ok := e.Val(dwarf.AttrDeclLine).(int64); ok {
					next.classFile, next.classLine = fileName(files, e.Val(dwarf.AttrDeclFile)), int(l)
				}
			}
		}
		if e.Children {
			stack = append(stack, next)
		}
	}
	return nil
}
