// Package unwind computes how to unwind a call stack from any instruction of
// a load module by binary analysis, as in Tallent, Mellor-Crummey and Fagan,
// "Binary Analysis for Measurement and Attribution of Program Performance"
// (PLDI 2009), section 2: procedure bounds come from the symbol tables plus
// inference for stripped code (protected intervals), and unwind recipes are
// computed lazily per procedure by a linear scan of its instructions and
// memoized by address interval. .eh_frame is not used; tests cross-check
// against it.
package unwind

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"bloop/isa"
	"bloop/loader"
)

// Module holds the procedure bounds and memoized recipes of one image.
// It is safe for concurrent use.
type Module struct {
	Img *loader.Image
	// Name is the module's base name where it was mapped (its file may be
	// a copy by another name): the walk tells the dynamic loader by it.
	Name string
	// arch decodes the module's code; framer classifies frame operations
	// (nil for instruction sets the unwinder does not know yet).
	arch   isa.Arch
	framer isa.Framer
	abi    isa.FrameABI
	entry  state // the state right after a call
	// Entry is the ELF entry point (_start): the outermost frame of a process.
	Entry uint64

	boundsOnce sync.Once
	procs      []Proc
	byName     map[string]int

	mu sync.Mutex
	// done holds the recipes computed, by procedure index: each is a
	// function of the module and the procedure alone (Recipes).
	done map[int][]Recipe
	// recipesLoaded: the memo's recipes were read into done; stored is
	// how many procedures' recipes the memo holds (SaveRecipes).
	recipesLoaded bool
	stored        int
	computed      int // procedures whose recipes were computed, not read
	// recipes, scanning and inbound are the state of one computation
	// (Recipes): the procedures scanned in it, those on its stack.
	recipes  map[int][]Recipe
	scanning map[int]bool
	// inbound holds the frame state at jumps from one procedure into
	// another (a hot part into its .cold part), keyed by target.
	inbound map[uint64]seen
	// xrefs lists, per procedure, the other procedures that jump into it.
	xrefs map[int][]int
	// memo keeps the bounds and xrefs between runs (nil: computed each run).
	memo Memo

	rootMu sync.RWMutex
	roots  map[uint64]bool // isRoot's answers by call site
	// rootCache holds roots' answers for lock-free reads (rootcache.go).
	rootCache rootCache
	// entryProc is the index of the procedure holding Entry (-1: none),
	// set once.
	entryOnce sync.Once
	entryProc int
	clearFP   clearFPs // where the ABI's frame-pointer clearing is
}

// Proc is one procedure's extent [Lo, Hi) as the unwinder sees it; each
// part of a hot/cold split procedure is a Proc of its own.
type Proc struct {
	Lo, Hi   uint64
	Name     string // symbol name; "" for inferred procedures
	Inferred bool   // found by inference, not from a symbol
}

// NewModule prepares unwinding for img. Nothing is computed until used.
func NewModule(img *loader.Image) *Module {
	arch := isa.For(img.Machine)
	framer, _ := arch.(isa.Framer)
	m := &Module{Img: img, Name: img.Name, arch: arch, framer: framer, Entry: img.Entry, done: map[int][]Recipe{}, scanning: map[int]bool{}, roots: map[uint64]bool{}}
	if framer != nil {
		m.abi = framer.ABI()
		m.entry = entryOf(m.abi)
	}
	return m
}

// ABI is the frame conventions of the module's instruction set (the zero
// value for one the unwinder does not know yet).
func (m *Module) ABI() isa.FrameABI { return m.abi }

// Procs returns the procedure bounds, sorted by address.
func (m *Module) Procs() []Proc {
	m.boundsOnce.Do(m.computeBounds)
	return m.procs
}

// ProcAt returns the index of the procedure holding pc, or -1.
func (m *Module) ProcAt(pc uint64) int {
	ps := m.Procs()
	i := sort.Search(len(ps), func(i int) bool { return ps[i].Lo > pc }) - 1
	if i >= 0 && pc < ps[i].Hi {
		return i
	}
	return -1
}

// RecipeAt returns the recipe for pc, computing its procedure's recipes on
// first use.
func (m *Module) RecipeAt(pc uint64) (Recipe, bool) {
	i := m.ProcAt(pc)
	if i < 0 {
		return Recipe{}, false
	}
	rs := m.Recipes(i)
	j := sort.Search(len(rs), func(j int) bool { return rs[j].Hi > pc })
	if j < len(rs) && rs[j].Lo <= pc && rs[j].OK() {
		return rs[j], true
	}
	return Recipe{}, false
}

// Recipes returns the recipes of procedure i, sorted and contiguous.
//
// They are computed from no state left by earlier computations: the
// procedures i depends on (its hot part, those jumping into it, the one
// an unnamed part of it jumps back into) are scanned again, first, from
// nothing, so that the result is the same whichever procedures were asked
// for before (the samples' order, the workers' timing) and can be kept
// between reports. What depends on whom is cyclic (a hot part and its
// cold part jump into each other), and the scan of a cycle depends on
// where it is entered: here always at i.
func (m *Module) Recipes(i int) []Recipe {
	m.Procs()
	m.mu.Lock()
	defer m.mu.Unlock()
	if rs, ok := m.done[i]; ok {
		return rs
	}
	m.loadRecipes()
	if rs, ok := m.done[i]; ok {
		return rs
	}
	m.recipes, m.inbound = map[int][]Recipe{}, map[uint64]seen{}
	rs := m.recipesLocked(i)
	m.recipes, m.inbound = nil, nil
	m.done[i] = rs
	m.computed++
	return rs
}

// RecipesComputed is how many procedures' recipes m computed rather than
// read from its memo.
func (m *Module) RecipesComputed() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.computed
}

func (m *Module) recipesLocked(i int) []Recipe {
	if rs, ok := m.recipes[i]; ok {
		return rs
	}
	if m.framer == nil { // an instruction set the unwinder does not know yet
		m.recipes[i] = nil
		return nil
	}
	m.scanning[i] = true
	defer delete(m.scanning, i)
	p := m.procs[i]
	// A cold part continues its hot part's frame: scan the procedures that
	// jump into p first, so the states at those jumps are known.
	if m.xrefs == nil {
		m.xrefs = m.jumps()
	}
	if parent, ok := m.coldParent(p); ok && !m.scanning[parent] {
		m.recipesLocked(parent)
	}
	for _, src := range m.xrefs[i] {
		// p's own cold part jumps back into p, but its frame is p's: it
		// is scanned after p, from the states p records at its jumps
		// and landing pads (scanned first, it would start from the entry
		// state and keep it).
		if parent, ok := m.coldParent(m.procs[src]); ok && parent == i {
			continue
		}
		if !m.scanning[src] {
			m.recipesLocked(src)
		}
	}
	rs, last := m.scan(p, m.entryFor(p))
	if rs2, ok := m.splitPart(i, last); ok {
		rs = rs2
	}
	m.recipes[i] = rs
	return rs
}

// entryFor is the state at p's first instruction: the state recorded at a
// jump into it (a cold part), else the state right after a call. The
// lazy-binding trampoline at the start of .plt runs with the relocation
// index pushed above the return address.
func (m *Module) entryFor(p Proc) state {
	// A jump to a function's entry is a tail call, and the callee's entry
	// state is known, whatever the jumping code's state was thought to be:
	// a cold part scanned from a wrong guess (LTO's "foo.lto_priv.0.cold"
	// entered from a jump table) jumps to its tail callee with a frame
	// that is not the caller's, and taking it would shift every recipe of
	// the callee (python3.11's PyUnicode_FromStringAndSize unwound with
	// the CFA below SP). A part with no name of its own, or named as a
	// cold part, continues the frame of the code that jumps in: the state
	// there, even a guess, is all there is to go by.
	// With a link register, a jump in whose frame lost the return address
	// (code after a call that does not return: glibc's static _start runs
	// into a b main) continues no frame: the callee starts afresh.
	lost := m.abi.LinkRegister && !m.inbound[p.Lo].st.lrLive && !m.inbound[p.Lo].st.raSaved
	if s, ok := m.inbound[p.Lo]; ok && (p.Inferred || p.Name == "" || isColdName(p.Name)) && !lost {
		return s.st
	}
	if sec := m.Img.SectionAt(p.Lo); m.abi.PLT0CFA != 0 && sec != nil && sec.Name == ".plt" && sec.Addr == p.Lo {
		return state{spKnown: true, sp: m.abi.PLT0CFA}
	}
	if m.abi.PLT0CFA != 0 && !m.abi.LinkRegister && lazyResolver(p.Name) {
		// The dynamic linker's resolver, which .plt's start jumps to
		// after pushing the link map: two words above the return address.
		return state{spKnown: true, sp: m.abi.PLT0CFA + 8}
	}
	return m.entry
}

// lazyResolver reports whether name is one of glibc's x86-64 lazy-binding
// resolvers (_dl_runtime_resolve_xsavec and its siblings, and the
// profiling ones), entered from the start of a module's .plt.
func lazyResolver(name string) bool {
	return strings.HasPrefix(name, "_dl_runtime_resolve") || strings.HasPrefix(name, "_dl_runtime_profile")
}

// jumpsBetween sweeps every procedure once and lists, for each, the other
// procedures whose direct jumps land in it.
func (m *Module) jumpsBetween() map[int][]int {
	out := map[int][]int{}
	for i, p := range m.procs {
		sec := m.Img.SectionAt(p.Lo)
		if sec == nil {
			continue
		}
		seenFrom := map[int]bool{}
		for a := p.Lo; a < p.Hi; {
			op := m.arch.Decode(m.Img.Bytes(a, min(a+uint64(m.arch.MaxLen()), sec.End())), a)
			a += uint64(op.Len)
			if op.Kind != isa.Jump && op.Kind != isa.CondJump || p.Lo <= op.Target && op.Target < p.Hi {
				continue
			}
			if j := m.ProcAt(op.Target); j >= 0 && !seenFrom[j] {
				seenFrom[j] = true
				out[j] = append(out[j], i)
			}
		}
	}
	// Exception landing pads run in the frame of their call sites.
	for _, cs := range m.Img.CallSites {
		i, j := m.ProcAt(cs.Lo), m.ProcAt(cs.Pad)
		if i >= 0 && j >= 0 && i != j && !slices.Contains(out[j], i) {
			out[j] = append(out[j], i)
		}
	}
	return out
}

// coldParent finds the hot part of a gcc "foo.cold" or "foo.cold.N" part.
func (m *Module) coldParent(p Proc) (int, bool) {
	if !isColdName(p.Name) {
		return 0, false
	}
	j, ok := m.byName[p.Name[:strings.LastIndex(p.Name, ".cold")]]
	return j, ok
}

// isColdName reports whether name is a gcc cold part's: "foo.cold" or
// "foo.cold.N".
func isColdName(name string) bool {
	i := strings.LastIndex(name, ".cold")
	if i <= 0 {
		return false
	}
	rest := name[i+len(".cold"):]
	return rest == "" || strings.Trim(rest, ".0123456789") == ""
}

// splitPart applies the paper's hot/cold test to a procedure found without
// a name to say so: when p ends with a jump into the interior of another
// procedure q, p is part of q. Scanning q then gives the state at that jump
// target (and at q's jumps into p), and p's recipes are recomputed from it.
func (m *Module) splitPart(i int, last lastJump) ([]Recipe, bool) {
	p := m.procs[i]
	if !last.ok || p.Lo <= last.target && last.target < p.Hi {
		return nil, false
	}
	q := m.ProcAt(last.target)
	if q < 0 || q == i || m.procs[q].Lo == last.target || m.scanning[q] {
		return nil, false
	}
	if _, done := m.recipes[q]; done {
		return nil, false // q was scanned before and recorded what it knows
	}
	if _, ok := m.coldParent(p); ok {
		return nil, false
	}
	qs := m.recipesLocked(q)
	if s, ok := m.inbound[p.Lo]; ok && s.st != m.entry {
		rs, _ := m.scan(p, s.st)
		return rs, true
	}
	// No jump into p's start: shift p's frame by the difference between
	// q's state at the target and p's state at the jump.
	for _, r := range qs {
		if r.Lo <= last.target && last.target < r.Hi && r.CFA == RegSP && last.st.spKnown && !last.st.cfaBP {
			if d := last.st.sp - r.CFAOff; d != 0 {
				init := m.entry
				init.sp -= d
				if init.sp > 0 {
					rs, _ := m.scan(p, init)
					return rs, true
				}
			}
		}
	}
	return nil, false
}
