package loader

import (
	"fmt"
	"path"
	"slices"
	"sync"

	"bloop/dwarfscan"
	"bloop/structure"
)

// Subprogram is a DWARF procedure descriptor that owns code.
type Subprogram struct {
	Name     string // DW_AT_name (through specification/abstract_origin)
	LinkName string // DW_AT_linkage_name, or ""
	DeclFile string
	DeclLine int
	Ranges   []structure.Range // sorted
	Inlines  []*Inline
	Parent   *Subprogram // lexically enclosing procedure (Fortran contains, local classes)
	Offset   uint64      // of its DWARF entry
	EntryPC  uint64      // DW_AT_low_pc, DW_AT_entry_pc, or the first range listed (the hot part)
	Desc     *Descriptor
	// NamesakeFiles is the file table of the first unit with this unit's
	// DW_AT_name base name when that is another unit, else nil. Dyninst
	// 12.3 reads DW_AT_call_file against it (see DyninstCallSite).
	NamesakeFiles []string
	// DyninstDeclNames are the linkage names Dyninst 12.3's DWARF walk
	// adds to this procedure's function from the code-less subprogram
	// declarations below its abstract origin and specification, not below
	// its own entry (a member of a local class: once_flag::
	// _Prepare_execution's constructor in libstdc++ gets its lambda's
	// destructor's name). Read only with Options.DyninstDeclNames.
	DyninstDeclNames []string
	// File0Unknown is set when Dyninst's table for this unit's call files
	// holds "Unknown file" at index 0 (see DyninstCallSite).
	File0Unknown bool
	// PrimaryAgain lists, in a unit named by an absolute path whose
	// call-file table (NamesakeFiles, else the unit's) writes entry 0 as
	// an absolute path, the indexes past 0 that name entry 0's file, the
	// primary source file, again: where clang's call sites in that file
	// point (see DyninstCallSite). Shared by the unit's procedures.
	PrimaryAgain []int32
	// lineUnit is its unit's DW_AT_stmt_list + 1 (0: none), for
	// LineTable.Beyond.
	lineUnit uint64
}

// DyninstCallSite is in's call file as Dyninst 12.3 reads it: the index
// looked up in the file table of the first unit whose name has the base
// name of in's own (gsl has four units named oper.c), where an index
// outside that table leaves the call site unread (<unknown>:0 in
// hpcstruct). Index 0 is DWARF 5's primary source file, where clang
// points the call sites in the main file: in the table Dyninst builds for
// a unit named by a relative path it is "Unknown file" (clang 14's units
// in the corpus), for a unit named by an absolute path the line table's
// file 0 (clang 15's in hpctoolkit-tests, built in / so that the name and
// comp_dir leave no other spelling). Where the absolute name is not
// comp_dir's child as given (a source named by an absolute path on the
// command line, as CMake does, with or without -fdebug-prefix-map), clang
// 14 writes the primary file again as entry 1, relative to comp_dir, and
// points the call sites in it there: hpcstruct 2023.08.1 writes "Unknown
// file" for them too (issue 40), as for index 0 of a relative unit. The
// rule is the table's shape, not the producer's: every index past 0 that
// names entry 0's file, in a table that writes entry 0 absolute
// (PrimaryAgain; gcc writes entry 0 as entry 1, relative, and hpcstruct
// writes the file there).
func (p *Subprogram) DyninstCallSite(in *Inline) (file string, ok bool) {
	if in.CallUnknown {
		return "", false
	}
	if in.CallIndex == 0 && p.File0Unknown || in.CallIndex > 0 && slices.Contains(p.PrimaryAgain, in.CallIndex) {
		return DyninstFile0, true
	}
	if p.NamesakeFiles == nil || in.CallIndex < 0 {
		return in.CallFile, true
	}
	if int(in.CallIndex) >= len(p.NamesakeFiles) {
		return "", false
	}
	return p.NamesakeFiles[in.CallIndex], true
}

// DyninstFile0 is what Dyninst's file table holds at index 0, whatever
// the unit's line table says.
const DyninstFile0 = "Unknown file"

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

// Callee is what an inlined call's abstract origin declares. The inline
// records of one origin in a unit share one (libjvm: 920,000 records), so
// whatever is derived from it, a demangled name, can be kept per Callee.
type Callee struct {
	Name     string // DW_AT_name (through specification/abstract_origin)
	LinkName string // DW_AT_linkage_name, or ""
	// DyninstName is the name Dyninst 12.3's DWARF walk ends up with: it
	// adds each entry's name as it reaches it (the entry, then what its
	// abstract origin leads to, then its specification), DW_AT_linkage_name
	// in place of DW_AT_name where the entry has one, and the last added is
	// the function's name. So the end of the chain decides: glibc's
	// declarations, which hidden_proto's asm labels give __GI_ linkage
	// names, name its inlined callees so. It never reads
	// DW_AT_MIPS_linkage_name: nvcc 11.8's callees are named by their
	// DW_AT_name (f4_inline), nvcc 11.2's by the mangled name it writes
	// there.
	DyninstName string
	DeclFile    string
	DeclLine    int
}

// Inline is one DW_TAG_inlined_subroutine: a call site and the callee's code.
type Inline struct {
	*Callee
	CallFile string
	CallLine int
	// CallUnknown marks a call site whose file hpcstruct (Dyninst) cannot read:
	// DW_AT_call_file encoded as DW_FORM_implicit_const, as gcc 12 emits in DWARF 5.
	CallUnknown bool
	CallIndex   int32             // DW_AT_call_file's index, or -1
	Ranges      []structure.Range // sorted
	Children    []*Inline
}

// InlineChainUntil is InlineChain, and the first address above addr where
// the chain may differ: consecutive instructions mostly share one, and
// the caller need not ask again below that address.
func (p *Subprogram) InlineChainUntil(addr uint64, buf []*Inline) ([]*Inline, uint64) {
	buf = buf[:0]
	until := ^uint64(0)
	list := p.Inlines
	for {
		var next *Inline
		// The choice at this level can change only where some sibling's
		// ranges begin or end.
		for _, in := range list {
			b, inside := Boundary(in.Ranges, addr)
			until = min(until, b)
			if inside && next == nil {
				next = in
			}
		}
		if next == nil {
			return buf, until
		}
		buf = append(buf, next)
		list = next.Children
	}
}

// InlineChain returns the inlined calls that cover addr, outermost first.
func (p *Subprogram) InlineChain(addr uint64, buf []*Inline) []*Inline {
	chain, _ := p.InlineChainUntil(addr, buf)
	return chain
}

// readDWARF reads the procedures, inline trees and line table of every
// compile unit. Units are walked independently, on opt.Workers goroutines,
// each as soon as its bytes of .debug_info have arrived, and merged in
// their order (mergeUnits), so the result depends neither on the number of
// workers nor on timing. It returns an error, and reads nothing, when the
// sections cannot be read as a whole.
func (img *Image) readDWARF(ds *dwarfSections, opt Options) error {
	q := &unitQueue{final: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	var wg sync.WaitGroup
	for range max(opt.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.work(img, opt)
		}()
	}
	err := q.feed(ds)
	wg.Wait()
	if err != nil {
		return err
	}
	img.Warnings = append(img.Warnings, q.warnings...)
	img.mergeUnits(q.walks)
	return nil
}

// unitQueue hands compile units to the walkers as .debug_info arrives.
type unitQueue struct {
	mu       sync.Mutex
	cond     *sync.Cond
	jobs     []unitJob
	closed   bool
	walks    []*unitWalk // by compile unit, in unit order
	warnings []string    // units that cannot be read, in unit order
	last     *dwarfscan.Data
	final    chan struct{} // closed when last covers all of .debug_info
	real     realPaths     // file names' spelling, with Options.RawFileNames
}

type unitJob struct {
	k, unit int // the k-th compile unit is unit `unit` of d
	d       *dwarfscan.Data
}

// feed extends the unit index as .debug_info arrives and queues each
// compile unit once it is complete. The queue is closed however feed ends
// (a panic on hostile input included), so that no walker waits forever.
func (q *unitQueue) feed(ds *dwarfSections) (err error) {
	defer q.close(&err)
	b := dwarfscan.NewBuilder(ds.Sections)
	seen := 0
	add := func(n int) error {
		d, err := b.Extend(n)
		if err != nil {
			return err
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		units := d.Units()
		for i := seen; i < len(units); i++ {
			if units[i].Err != nil {
				q.warnings = append(q.warnings, fmt.Sprintf("compile unit at %#x skipped: %v", units[i].Offset, units[i].Err))
				continue
			}
			if t := units[i].UnitType; t == dwarfscan.UTCompile || t == dwarfscan.UTPartial {
				q.jobs = append(q.jobs, unitJob{k: len(q.walks), unit: i, d: d})
				q.walks = append(q.walks, nil)
			}
		}
		seen = len(units)
		q.last = d
		q.cond.Broadcast()
		return nil
	}
	for n := range ds.progress {
		if err == nil {
			err = add(n)
		}
	}
	if err == nil {
		err = ds.err
	}
	if err == nil {
		err = add(len(ds.Info))
	}
	return err
}

// close ends the queue; after an error (or a panic, which it records as
// one) the units not yet walked are dropped.
func (q *unitQueue) close(err *error) {
	if x := recover(); x != nil {
		*err = fmt.Errorf("malformed DWARF (%v)", x)
	}
	q.mu.Lock()
	q.closed = true
	if *err != nil {
		q.jobs = nil
	}
	q.cond.Broadcast()
	q.mu.Unlock()
	close(q.final)
}

// work walks queued units until the queue is closed and empty.
func (q *unitQueue) work(img *Image, opt Options) {
	for {
		q.mu.Lock()
		for len(q.jobs) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.jobs) == 0 {
			q.mu.Unlock()
			return
		}
		j := q.jobs[0]
		q.jobs = q.jobs[1:]
		q.mu.Unlock()
		w := newUnitWalk(img, j.d)
		w.noDesc = opt.SkipDescriptors
		w.declNames = opt.DyninstDeclNames
		if opt.RawFileNames {
			w.real = &q.real
		}
		w.whole = q.whole
		w.walk(j.unit)
		q.mu.Lock()
		q.walks[j.k] = w
		q.mu.Unlock()
	}
}

// whole waits for all of .debug_info and returns the index over it, for a
// reference into a unit that had not arrived when the walk began.
func (q *unitQueue) whole() *dwarfscan.Data {
	<-q.final
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.last
}

// mergeUnits joins the units' findings in unit order. A descriptor is one
// per (file, line, name) across the image: the first unit's, with the flags
// every unit found for it.
func (img *Image) mergeUnits(units []*unitWalk) {
	nd, np := 0, 0
	lines := make([]*lineBuilder, len(units))
	for i, u := range units {
		nd, np = nd+len(u.descList), np+len(u.procs)
		lines[i] = &u.lines
	}
	resolveNamesakes(units)
	canon := make(map[*Descriptor]*Descriptor, nd)
	byKey := make(map[descKey]*Descriptor, nd)
	lt := &lineBuilder{img: img}
	lt.mergeRows(lines)
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
		img.Warnings = append(img.Warnings, u.warnings...)
		img.bad.merge(u.bad)
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

// resolveNamesakes gives the procedures of each unit that shares its
// DW_AT_name's base name with an earlier unit that unit's file table, the
// one Dyninst resolves their call files against. The key is the base name
// because Dyninst's is (libstdc++'s c++20/sstream-inst.cc reads its call
// files in c++11/sstream-inst.cc's table). Units are in unit order, so the
// choice does not depend on which walker read which unit. It also marks
// the procedures of units named by a relative path (File0Unknown), and
// the indexes that name the primary file again in those named by an
// absolute path (PrimaryAgain).
func resolveNamesakes(units []*unitWalk) {
	type table struct {
		files []string
		abs   bool // entry 0 written as an absolute path
	}
	first := map[string]table{}
	for _, u := range units {
		if !path.IsAbs(u.name) {
			for _, p := range u.procs {
				p.File0Unknown = true
			}
		}
		if u.name == "" {
			continue
		}
		key := path.Base(u.name)
		t, ok := first[key]
		if !ok {
			t = table{u.files[u.ui], u.file0Abs[u.ui]}
			first[key] = t
		} else {
			for _, p := range u.procs {
				p.NamesakeFiles = t.files
			}
		}
		if again := primaryAgain(t.files); again != nil && t.abs && path.IsAbs(u.name) {
			for _, p := range u.procs {
				p.PrimaryAgain = again
			}
		}
	}
}

// primaryAgain returns the indexes past 0 of file table t that name its
// entry 0 again; nil before DWARF 5, whose tables have no entry 0. gcc
// writes entry 0 and 1 alike, relative to a directory, and hpcstruct
// writes the file for call sites at 1 (hpctoolkit-tests' gcc 12 ones):
// only a table whose entry 0 is written absolute, another spelling than
// the entries after it, is of the shape (resolveNamesakes).
func primaryAgain(t []string) []int32 {
	if len(t) == 0 || t[0] == "" {
		return nil
	}
	var out []int32
	for k := 1; k < len(t); k++ {
		if t[k] == t[0] {
			out = append(out, int32(k))
		}
	}
	return out
}
