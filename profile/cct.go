// Package profile turns a recording (package sample) into calling-context
// trees: each sample is unwound with binary-analysis recipes (package
// unwind), and every frame is expanded into the static scopes bloop
// recovers for its address (procedure, inlined calls, loops, statement),
// so loops and inlined code appear inside full call paths (HPCToolkit's
// fusion of call paths with program structure).
//
// Data flows one way: a Source (source.go: bloop's recordings and
// perf.data files in recording.go, HPCToolkit measurement directories in
// hpcrun.go) gives each sample as a Path; the one insertion (insert.go)
// files it in the model (this file: Profile, Node, Elem, metrics,
// threads) and in the tree of stacks (stacks.go); the views (views.go:
// top-down, bottom-up, flat) and the pprof profile (pprof.go) are made
// from the finished trees.
package profile

import (
	"fmt"

	"bloop/cache"
	"bloop/loader"
	"bloop/sample"
	"bloop/scopes"
	"bloop/source"
)

// Node is a node of a calling-context tree.
type Node struct {
	Elem     *Elem // nil for a root
	Label    string
	Parent   *Node
	Children []*Node
	kids     map[*Elem]*Node
	Incl     uint64 // samples in this context: its scopes and callees included
	// Excl counts the samples whose innermost scope is this node (in the
	// views: the innermost scope shown), so a procedure's loops, inlined
	// calls and lines hold their own samples, not the procedure's.
	Excl uint64
	// EvIncl and EvExcl are Incl and Excl of every event (indexed as
	// Meta.EventNames) when the recording has more than one; Incl and
	// Excl are those of the event shown.
	EvIncl, EvExcl []uint64
}

// addVals adds the counts of b (one event's, or every event's) to n's.
func (n *Node) addVals(incl, excl uint64, evIncl, evExcl []uint64) {
	n.Incl += incl
	n.Excl += excl
	n.EvIncl = addVec(n.EvIncl, evIncl)
	n.EvExcl = addVec(n.EvExcl, evExcl)
}

func addVec(a, b []uint64) []uint64 {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = make([]uint64, len(b))
	}
	for i, v := range b {
		a[i] += v
	}
	return a
}

func (n *Node) child(e *Elem) *Node { return n.childLabeled(e, (*Elem).Label) }

// childLabeled is child, a new child labeled by label.
func (n *Node) childLabeled(e *Elem, label func(*Elem) string) *Node {
	if c := n.kid(e); c != nil {
		return c
	}
	c := &Node{Elem: e, Label: label(e)}
	n.attach(c)
	return c
}

// childAs is n's child of the scope of m (another tree's node), made
// if new with m's label.
func (n *Node) childAs(m *Node) *Node {
	if c := n.kid(m.Elem); c != nil {
		return c
	}
	c := &Node{Elem: m.Elem, Label: m.Label}
	n.attach(c)
	return c
}

// nodeScan is how many children a node searches in its list before it
// keeps a map of them (most nodes have one or two).
const nodeScan = 8

// kid returns n's child of scope e, nil when it has none.
func (n *Node) kid(e *Elem) *Node {
	if n.kids != nil {
		return n.kids[e]
	}
	for _, c := range n.Children {
		if c.Elem == e {
			return c
		}
	}
	return nil
}

// adopt makes c a child of n, merged into the child of the same scope if
// n has one.
func (n *Node) adopt(c *Node) {
	if have := n.kid(c.Elem); have != nil {
		merge(have, c)
		return
	}
	n.attach(c)
}

func (n *Node) attach(c *Node) {
	c.Parent = n
	n.Children = append(n.Children, c)
	switch {
	case n.kids != nil:
		n.kids[c.Elem] = c
	case len(n.Children) > nodeScan:
		n.kids = make(map[*Elem]*Node, len(n.Children))
		for _, k := range n.Children {
			n.kids[k.Elem] = k
		}
	}
}

// Options tune Build.
type Options struct {
	// StructFiles are structure files (bloop struct or hpcstruct output)
	// used for the modules they describe instead of analysing them.
	StructFiles []string
	// Analyze selects the modules analysed on the fly (nil: all that have
	// samples and no structure file).
	Analyze   func(path string) bool
	DebugDirs []string
	// Cache, when set, keeps each module's analysis between reports.
	Cache *cache.Cache
	// Event names the event whose samples the trees hold (perf.data
	// files have several; empty: the first).
	Event string
	// ModuleDirs are searched, by base name, for a perf.data file's
	// module whose recorded path holds another build (by build-id).
	ModuleDirs []string
	// Sysroot is a directory holding the recording machine's files at
	// their paths, as perf's --symfs: a module mapped from /usr/lib/x.so
	// is read from Sysroot/usr/lib/x.so when that exists (a recording
	// made on an aarch64 or ppc64le machine, reported on another).
	Sysroot string
	// Fetcher, when set, fetches by build-id what this machine lacks (a
	// debuginfod client): a perf.data file's module whose recorded path
	// is gone or holds another build, found in no module directory
	// (Executable), and a module's separate debug file (Debuginfo, asked
	// by the loader when none is found here).
	Fetcher Fetcher
	// Sources, when set, fetches the sources of a module analysed here
	// that are not on this machine, by its build-id, for the hybrid
	// mode's loop lines as bloop struct does (a debuginfod client).
	Sources source.Fetcher
	// Jobs is how many workers unwind the samples of a recording or
	// perf.data file (0, 1: the reading goroutine alone). The paths are
	// inserted in the file's order whatever it is, so the output is too.
	Jobs int
	// WholeModules analyses every procedure of a sampled module; by
	// default only those the stacks of a recording or perf.data file
	// reach are (the same scopes, TestSampledAnalysis).
	WholeModules bool
}

// Fetcher fetches ELF files by build-id (package debuginfod's Client).
type Fetcher interface {
	loader.DebugFetcher
	Executable(buildID []byte) (string, error)
}

// Profile is an attributed recording.
type Profile struct {
	Meta     sample.Meta
	Stats    sample.Stats
	HasStats bool
	Lost     uint64 // samples the kernel dropped

	Samples uint64 // all events'
	// Event is the event the trees hold (index in Meta.EventNames),
	// Total its samples' values: the views' 100%. A sample's value is
	// its period in a perf.data file (nanoseconds of cpu-clock, page
	// faults, ...), 1 in bloop's recordings.
	Event        int
	Total        uint64
	EventSamples []uint64          // samples per event
	EventTotals  []uint64          // values per event
	Chains       uint64            // perf.data samples taken as given (callchain or IP), not unwound
	Outcomes     [3]uint64         // recipe unwinds by Outcome
	FPOutcomes   [3]uint64         // frame-pointer-only unwinds of the same samples
	FPSteps      uint64            // frames without a recipe, unwound by frame pointer
	Reasons      map[string]uint64 // why unwinds failed
	Truncated    uint64            // stack copies the unwind ran past
	// StackUse is the most bytes above SP that a complete unwind read:
	// the smallest stack copy (bloop record --stack) that unwinds this
	// recording's samples as well.
	StackUse uint64

	Root *Node // all threads merged
	// Threads holds each thread's tree, by thread id; read it through
	// ThreadTrees, which makes the trees of a profile built from stacks
	// the first time.
	Threads map[uint32]*Node
	Comms   map[uint32]string
	Modules []*Module
	// EventScale turns an event's values into the unit it is shown in
	// (nil: 1 each; hpcrun's real metrics are kept in nano-units).
	EventScale []float64
	// Meas describes an HPCToolkit measurement directory (nil otherwise).
	Meas *MeasInfo
	// Warnings are things the report should say but that did not stop it
	// (a structure file's LM naming another path than its module's).
	Warnings []string

	stacks stacks            // the samples' stacks, for pprof and hpcrun's format
	pids   map[uint32]uint32 // each thread's process
	// lastPid is the last entry written to pids (setPid).
	lastPid tidPid
	// partsRead is how many parts the file's samples were read in
	// (parts.go), 0: by one reader.
	partsRead int
	// deferScopes: the scope trees are made from stacks after the pass
	// (fileStacks), not sample by sample.
	deferScopes bool
	// threadsPending: the threads' trees are still to be made from the
	// tree of stacks (ThreadTrees).
	threadsPending bool
	// placed is each node of the tree of stacks' place in the merged
	// tree, by id, kept for the threads' (threadPlaces).
	placed    []*Node
	evScratch []uint64 // InsertScopes' per-event values of one sample
	sp        *space
	elems     map[elemKey]*Elem // scopes for addresses without structure
	// elemPaths is the one path of each procedure (and line) of elems:
	// a frame's path is one slice whoever asks, as a scope index's are
	// (the placer knows paths by their arrays).
	elemPaths map[[2]*Elem][]*Elem
	// aliases are the symbol names of each procedure scope met, for
	// comparisons with profilers that pick another of them (perf).
	aliases map[*Elem][]string
	bound   map[*Module]*scopeIndex // structure files' LMs by the module they describe
	opt     Options
}

type elemKey struct {
	mod  *Module
	kind ElemKind
	addr uint64
	line int
	file string
}

// partial roots samples whose unwind did not reach an entry point.
var partial = &Elem{Kind: ElemProc, Name: "[partial]"}

func newProfile(opt Options) *Profile {
	return &Profile{Root: &Node{Label: "<program>"}, Threads: map[uint32]*Node{}, Comms: map[uint32]string{}, pids: map[uint32]uint32{},
		Reasons: map[string]uint64{}, elems: map[elemKey]*Elem{}, bound: map[*Module]*scopeIndex{}, opt: opt}
}

// scopesOf expands a frame into its static scopes: from the module's
// structure when it has one, else the procedure from the symbol table (or
// the module and offset) and the line from the line table.
func (p *Profile) scopesOf(f Frame) []*Elem {
	if path := p.indexedScopes(f); path != nil {
		return path
	}
	return p.madeScopes(f)
}

// madeScopes is scopesOf of a frame outside its module's scope index:
// the procedure and line made from the symbols and the line table, each
// scope once.
func (p *Profile) madeScopes(f Frame) []*Elem {
	m := f.Mod
	if m.kernel != nil {
		return p.elemPath(p.kernelProc(m, f.Addr), nil)
	}
	proc := p.elem(elemKey{mod: m, kind: ElemProc, addr: f.Addr}, func() *Elem {
		name := fmt.Sprintf("%s+%#x", m.Name, f.Addr)
		if m.Img != nil {
			if fn := m.Img.FuncAt(f.Addr); fn != nil {
				name = scopes.Demangle(fn.Name)
			} else if m.Unw != nil {
				if i := m.Unw.ProcAt(f.Addr); i >= 0 {
					name = fmt.Sprintf("%s@%#x", m.Name, m.Unw.Procs()[i].Lo)
				}
			}
		}
		return &Elem{Kind: ElemProc, Name: name, Module: m.Name}
	})
	p.noteAliases(m, f.Addr, proc)
	if row, ok := p.lineOf(m, f.Addr); ok {
		st := p.elem(elemKey{mod: m, kind: ElemStmt, file: row.file, line: row.line}, func() *Elem {
			return &Elem{Kind: ElemStmt, File: row.file, Line: row.line}
		})
		return p.elemPath(proc, st)
	}
	return p.elemPath(proc, nil)
}

// indexedScopes is scopesOf of a frame its module's scope index holds,
// nil for one it does not: a look-up, with nothing made.
func (p *Profile) indexedScopes(f Frame) []*Elem {
	m := f.Mod
	if m.kernel != nil {
		if m.Img == nil {
			return nil
		}
		return p.structure(m).lookup(f.Addr - m.kbias)
	}
	path := p.structure(m).lookup(f.Addr)
	if path != nil {
		p.noteAliases(m, f.Addr, path[0])
	}
	return path
}

// elemPath is the path of procedure proc and, unless nil, line st.
func (p *Profile) elemPath(proc, st *Elem) []*Elem {
	k := [2]*Elem{proc, st}
	if path, ok := p.elemPaths[k]; ok {
		return path
	}
	path := []*Elem{proc}
	if st != nil {
		path = append(path, st)
	}
	if p.elemPaths == nil {
		p.elemPaths = map[[2]*Elem][]*Elem{}
	}
	p.elemPaths[k] = path
	return path
}

// lineOf is the line-table row of a frame outside the module's scopes:
// kept with its scope index (a warm report), else read from the DWARF.
func (p *Profile) lineOf(m *Module, addr uint64) (lineRow, bool) {
	if m.Img == nil {
		return lineRow{}, false
	}
	if row, known := m.index.lineOutside(addr); known {
		return row, row.ok
	}
	m.Img.LoadDWARF()
	if m.Img.Lines == nil {
		return lineRow{}, false
	}
	row, ok := m.Img.Lines.Lookup(addr)
	return lineRow{file: row.File, line: row.Line, ok: ok}, ok
}

// elem returns the one Elem for a key, so that equal scopes share a node.
func (p *Profile) elem(k elemKey, mk func() *Elem) *Elem {
	if k.kind == ElemProc && k.mod != nil {
		// One element per procedure, whatever the address inside it.
		if k.mod.Img != nil {
			if fn := k.mod.Img.FuncAt(k.addr); fn != nil {
				k.addr = fn.Addr
			} else if k.mod.Unw != nil {
				if i := k.mod.Unw.ProcAt(k.addr); i >= 0 {
					k.addr = k.mod.Unw.Procs()[i].Lo
				}
			}
		}
	}
	if e, ok := p.elems[k]; ok {
		return e
	}
	e := mk()
	p.elems[k] = e
	return e
}

// structure returns the module's scope index: from a structure file, or
// computed by bloop's analysis on first use.
func (p *Profile) structure(m *Module) *scopeIndex { return p.structureOf(m, nil) }

// structureOf is structure, computing the index (the first time) of
// only the procedures holding the sorted addresses when they are given.
func (p *Profile) structureOf(m *Module, only []uint64) *scopeIndex {
	m.structOnce.Do(func() {
		if x, ok := p.bound[m]; ok {
			m.index = x
			return
		}
		if m.Img == nil || p.opt.Analyze != nil && !p.opt.Analyze(m.Path) {
			return
		}
		m.index = analyzeModule(p.opt.Cache, m.Img, m.Name, p.sp.opt, p.opt.Sources, only)
	})
	return m.index
}

// noteAliases keeps the symbol names at the procedure holding addr for
// its scope e, the first time e is met.
func (p *Profile) noteAliases(m *Module, addr uint64, e *Elem) {
	if e.noted || m.Img == nil {
		return
	}
	e.noted = true
	if p.aliases == nil {
		p.aliases = map[*Elem][]string{}
	}
	p.aliases[e] = nil
	if fn := m.Img.FuncAt(addr); fn != nil {
		p.aliases[e] = fn.Aliases
	}
}

// Aliases returns the symbol names of the procedure a scope is (its
// Name may be another: a DWARF name, or another symbol at its address).
func (p *Profile) Aliases(e *Elem) []string { return p.aliases[e] }
