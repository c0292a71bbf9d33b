package loader

import (
	"fmt"

	"bloop/dwarfscan"
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
	Offset   uint64      // of its DWARF entry
	EntryPC  uint64      // DW_AT_low_pc, DW_AT_entry_pc, or the first range listed (the hot part)
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

// readDWARF reads the procedures, inline trees and line table of every
// compile unit. Units are walked independently, in parallel, and merged in
// their order (mergeUnits), so the result does not depend on the number of
// workers.
func (img *Image) readDWARF(d *dwarfscan.Data, opt Options) {
	var cus []int
	units := d.Units()
	for i := range units {
		if units[i].Err != nil {
			img.Warnings = append(img.Warnings, fmt.Sprintf("compile unit at %#x skipped: %v", units[i].Offset, units[i].Err))
			continue
		}
		if t := units[i].UnitType; t == dwarfscan.UTCompile || t == dwarfscan.UTPartial {
			cus = append(cus, i)
		}
	}
	walks := make([]*unitWalk, len(cus))
	par.For(opt.Workers, len(cus), func(k int) {
		w := newUnitWalk(img, d)
		w.noDesc = opt.SkipDescriptors
		w.walk(cus[k])
		walks[k] = w
	})
	img.mergeUnits(walks)
}

// mergeUnits joins the units' findings in unit order. A descriptor is one
// per (file, line, name) across the image: the first unit's, with the flags
// every unit found for it.
func (img *Image) mergeUnits(units []*unitWalk) {
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
