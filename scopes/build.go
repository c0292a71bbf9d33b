package scopes

import (
	"sort"

	"bloop/cfg"
	"bloop/havlak"
	"bloop/isa"
	"bloop/loader"
	"bloop/structure"
)

// Input is one procedure to place: its symbol, DWARF descriptor (or nil),
// control-flow graph and loop forest.
type Input struct {
	Img    *loader.Image
	Func   *loader.Func
	Sub    *loader.Subprogram
	Graph  *cfg.Graph
	Forest *havlak.Forest
	// Names, when set, gives GNU's spelling of demangled names.
	Names *Names
	// Claimed marks a procedure whose code another procedure's CFG took
	// over (Dyninst's call-to-next-instruction parse, a parse that falls
	// out of its extent): it gets only its gaps, the bytes of its extent
	// that Covered, the code those procedures parse there, leaves out
	// (hpcstruct files the padding of __heap_select, which vector's copy
	// constructor runs into in stl-gcc12-O3, under __heap_select).
	Claimed bool
	Covered []structure.Range
	// GroupCovered and GroupEnd are set for a symbol's procedure whose
	// extent Dyninst shares with functions it made inside it (compat
	// mode, procs.Table.Within): the code their parses reach in the
	// symbol's extent, and the symbol's end. hpcstruct computes the gaps
	// of the symbol's whole extent, over what all of them cover, and
	// writes them under the symbol's procedure.
	GroupCovered []structure.Range
	GroupEnd     uint64
	// Hpcstruct builds hpcstruct's tree where it departs from what the
	// DWARF says (the hpcstruct-compatible mode):
	//   - call sites read as Dyninst reads them
	//     (loader.Subprogram.DyninstCallSite): a file from a namesake
	//     unit's table, or <unknown>:0;
	//   - loops placed, their header lines picked and irreducible ones
	//     merged by hpcstruct's rule (locate.go), which reads the loop's
	//     surroundings (calls its code branches into, nested loops) rather
	//     than its exit conditions alone;
	//   - an inlined callee's file as hpcstruct's locateTree gives it: its
	//     nested call sites' first in string-table order (ranks.go), else
	//     its loops', else its statements'; not the lowest-addressed call's.
	Hpcstruct bool
	// Device, when set, names the GPU whose code this is, analysed with a
	// CFG: each call to a procedure's entry is a call site (C) of it
	// rather than a statement, as hpcstruct --gpucfg writes them.
	Device string
	// BodyLines: the compiler writes no line on branches (clang for AMD
	// GPUs writes line 0 on every one), so a loop whose exit conditions
	// have no line takes its header line from its own code (bodyLine).
	// hpcstruct writes 0 there: not with Hpcstruct.
	BodyLines bool
}

// inlKey identifies an inlined call within its parent context, as hpcstruct
// keys them: call site and callee.
type inlKey struct {
	callFile   string
	callLine   int
	unknown    bool
	name       string
	calleeFile string
}

type stmtKey struct {
	file string
	line int
}

// node is one inline context under construction: statements, loops and
// nested inlined calls, before ordering and guard aliens are decided.
type node struct {
	kids  map[*inlKey]*node
	stmts map[stmtKey][]structure.Range
	calls []callNode
	loops []*loopNode
	// lowest is the smallest address under the node once known (0: not
	// yet): every level of an inline nest asks for its children's.
	lowest uint64
}

// callNode is one call instruction written as a call site.
type callNode struct {
	key    stmtKey
	r      structure.Range
	target uint64
	device string
}

type loopNode struct {
	file  string
	line  int
	entry uint64
	path  []*inlKey
	body  *node
}

func newNode() *node { return &node{kids: map[*inlKey]*node{}, stmts: map[stmtKey][]structure.Range{}} }

func (n *node) child(k *inlKey) *node {
	c := n.kids[k]
	if c == nil {
		c = newNode()
		n.kids[k] = c
	}
	return c
}

type builder struct {
	in    Input
	names func(*loader.Inline) string
	chain []*loader.Inline
	// keys remembers each inlined call's key: an inline record covers many
	// instructions, and its key (a demangled name) is the same for all.
	// Keys are interned, one pointer per distinct key in the procedure, so
	// contexts are found by pointer rather than by hashing three strings.
	keys   map[*loader.Inline]*inlKey
	intern map[inlKey]*inlKey
	// last is the previous path and the chain it came from: consecutive
	// instructions mostly share one.
	last      []*inlKey
	lastChain []*loader.Inline
	chainLo   uint64 // the last chain holds for [chainLo, chainHi)
	chainHi   uint64
	// The context of the last statement added: the next instruction is
	// usually in it too.
	lastRoot *node
	lastPath []*inlKey
	lastNode *node
	row      loader.LineRow // the line row of the last lookup
	rowOK    bool
	rowIdx   int // its index, a hint for the next lookup
	// The range the last instruction went into, in lastNode's statement
	// of the row [rowLo, rowHi): the next one usually extends it. Only
	// appends to that statement move it, and they update it.
	lastRange    *structure.Range
	rowLo, rowHi uint64
	// beyond are the rows only this procedure's unit sees
	// (loader.LineTable.Beyond), in compat mode.
	beyond []loader.LineRow
	// The statement of the gaps being walked (gapAt): its start, end and
	// line.
	gapLo, gapEnd uint64
	gapKey        stmtKey
}

// path returns the inline keys of addr's inlined-call chain. The slice is
// shared with later calls for the same chain and must not be modified.
func (b *builder) path(addr uint64) []*inlKey {
	if b.in.Sub == nil && !b.in.Hpcstruct {
		return nil
	}
	if addr >= b.chainLo && addr < b.chainHi {
		return b.last
	}
	sub, subHi := b.subAt(addr)
	if sub == nil {
		b.chainLo, b.chainHi = addr, subHi
		b.last, b.lastChain = nil, b.lastChain[:0]
		return nil
	}
	b.chain, b.chainHi = sub.InlineChainUntil(addr, b.chain)
	b.chainLo, b.chainHi = addr, min(b.chainHi, subHi)
	if len(b.chain) == 0 {
		b.last, b.lastChain = nil, b.lastChain[:0]
		return nil
	}
	if sameChain(b.chain, b.lastChain) {
		return b.last
	}
	if b.keys == nil {
		b.keys, b.intern = map[*loader.Inline]*inlKey{}, map[inlKey]*inlKey{}
	}
	keys := make([]*inlKey, len(b.chain))
	for i, in := range b.chain {
		k, ok := b.keys[in]
		if !ok {
			v := inlKey{callFile: in.CallFile, callLine: in.CallLine, name: b.names(in), calleeFile: in.DeclFile}
			unknown := false
			if b.in.Hpcstruct {
				f, ok := sub.DyninstCallSite(in)
				v.callFile, unknown = f, !ok
			}
			v.unknown = unknown
			if unknown {
				v.callFile, v.callLine = "", 0
			}
			// hpcstruct keys an inline node by call-site file, line and
			// callee name only (its FLPIndex): two static functions of
			// one name from different files (libm's neval and deval of
			// e_j0l.c and e_j1l.c, in one parse) called from one site,
			// such as <unknown>:0, are one node, whose callee file its
			// code decides (calleeFileOf). The first one's declaring file
			// stays the fallback.
			iv := v
			if b.in.Hpcstruct {
				iv.calleeFile = ""
			}
			if k = b.intern[iv]; k == nil {
				k = &v
				b.intern[iv] = k
			}
			b.keys[in] = k
		}
		keys[i] = k
	}
	b.last = keys
	b.lastChain = append(b.lastChain[:0], b.chain...)
	return keys
}

func sameChain(a, b []*loader.Inline) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (b *builder) line(addr uint64) stmtKey {
	for _, r := range b.beyond {
		if addr >= r.Addr && addr < r.End {
			b.row, b.rowOK = r, true
			return stmtKey{r.File, r.Line}
		}
	}
	if !b.rowOK || addr < b.row.Addr || addr >= b.row.End {
		b.row, b.rowIdx, b.rowOK = b.in.Img.Lines.LookupNear(addr, b.rowIdx)
	}
	if b.rowOK {
		return stmtKey{b.row.File, b.row.Line}
	}
	return stmtKey{}
}

// subAt is the DWARF procedure whose inline tree describes addr, and the
// address up to which it does: the procedure's own, except in code of
// another procedure its CFG continued into (cfg.Dyninst.FallOut, a call to
// the next instruction), which Dyninst describes by that procedure's
// inline tree, as it looks inlined code up by address. In compat mode a
// procedure without a DWARF procedure of its own gets those inline trees
// too (arm64 stl-clang14-O2's __clang_call_terminate: Dyninst does not know
// the std::terminate stub does not return, and the parse runs on into the
// next procedures, whose inlined code hpcstruct writes in it); nil where no
// DWARF procedure describes addr.
func (b *builder) subAt(addr uint64) (*loader.Subprogram, uint64) {
	own := b.in.Sub
	if own == nil {
		if o := b.in.Img.SubprogramAt(addr); o != nil {
			if ohi, ok := loader.Boundary(o.Ranges, addr); ok {
				return o, ohi
			}
		}
		return nil, addr + 1
	}
	hi, inside := loader.Boundary(own.Ranges, addr)
	if inside {
		return own, hi
	}
	if o := b.in.Img.SubprogramAt(addr); o != nil {
		if ohi, ok := loader.Boundary(o.Ranges, addr); ok {
			return o, min(hi, ohi)
		}
	}
	return own, addr + 1 // another procedure's code may start at the next address
}

// samePath reports whether two paths are the same slice (path returns one
// slice per chain, and rel a suffix of it).
func samePath(a, b []*inlKey) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

func (b *builder) addRange(root *node, path []*inlKey, r structure.Range) {
	n := b.lastNode
	if n == nil || root != b.lastRoot || !samePath(path, b.lastPath) {
		n = root
		for _, k := range path {
			n = n.child(k)
		}
		b.lastRoot, b.lastPath, b.lastNode = root, path, n
		b.lastRange = nil
	}
	if lr := b.lastRange; lr != nil && lr.Hi == r.Lo && r.Lo >= b.rowLo && r.Lo < b.rowHi {
		lr.Hi = r.Hi // same context, same row: the same statement goes on
		return
	}
	k := b.line(r.Lo)
	b.rowLo, b.rowHi = r.Lo, r.Lo+1 // no row: only this address is known
	if b.rowOK {
		b.rowLo, b.rowHi = b.row.Addr, b.row.End
	}
	rs := n.stmts[k]
	if len(rs) > 0 && rs[len(rs)-1].Hi == r.Lo {
		// Ranges are merged when emitted; growing the last one saves
		// an element per instruction. rs shares the map's array.
		rs[len(rs)-1].Hi = r.Hi
	} else {
		rs = append(rs, r)
		n.stmts[k] = rs
	}
	b.lastRange = &rs[len(rs)-1]
}

func (b *builder) addBlock(root *node, blk *cfg.Block, base []*inlKey) {
	for i := range blk.Insts {
		in := &blk.Insts[i]
		if b.callSite(in) {
			b.addCall(root, rel(b.path(in.Addr), base), in)
			continue
		}
		b.addRange(root, rel(b.path(in.Addr), base), in.Span())
	}
}

// callSite reports whether in is written as a call site: a direct call
// to a procedure's entry in GPU code (Input.Device).
func (b *builder) callSite(in *cfg.Inst) bool {
	if b.in.Device == "" || in.Kind != isa.Call {
		return false
	}
	f := b.in.Img.FuncAt(in.Target)
	return f != nil && f.Addr == in.Target
}

// addCall places a call site in its context.
func (b *builder) addCall(root *node, path []*inlKey, in *cfg.Inst) {
	n := root
	for _, k := range path {
		n = n.child(k)
	}
	n.calls = append(n.calls, callNode{key: b.line(in.Addr), r: in.Span(), target: in.Target, device: b.in.Device})
	b.lastNode = nil // the next statement does not extend across it
}

// tree builds the procedure's context tree: loops (each placed in the
// inline context of its exit conditions), then the code outside loops, then
// the gaps the CFG did not reach.
func (b *builder) tree() *node {
	root := newNode()
	if b.in.Claimed {
		b.addGaps(root)
		return root
	}
	g, f := b.in.Graph, b.in.Forest
	if g != nil {
		for _, l := range f.Top {
			place(root, b.loop(l, nil))
		}
		for i, blk := range g.Blocks {
			if f.Innermost[i] == nil {
				b.addBlock(root, blk, nil)
			}
		}
	}
	b.addGaps(root)
	return root
}

// addGaps places the gaps (Gaps), each piece with its line and the
// inline context of gapAt.
func (b *builder) addGaps(root *node) {
	for _, r := range Gaps(b.in) {
		b.addRange(root, b.path(b.gapAt(r)), r)
	}
}

// gapAt is the address whose inline context a gap piece takes: its own
// start, except that in compat mode consecutive pieces of one file and
// line are one statement for hpcstruct, which looks the context up at the
// first. So the traceback table after a ppc64 procedure's last call, a
// row of that call's line that starts where the DWARF range of the inlined
// callee holding the call ends, stays in that callee (_M_check_len's
// __throw_length_error in vector::_M_realloc_insert, ppc64le stl-gcc12-O2,
// tmpl-gcc12-O2/O3). Pieces come in address order.
func (b *builder) gapAt(r structure.Range) uint64 {
	if !b.in.Hpcstruct || b.in.Img.InstSize > 0 {
		return r.Lo
	}
	k := b.line(r.Lo)
	if r.Lo == b.gapEnd && k == b.gapKey {
		b.gapEnd = r.Hi
		return b.gapLo
	}
	b.gapLo, b.gapEnd, b.gapKey = r.Lo, r.Hi, k
	return r.Lo
}

// Gaps are the bytes of the procedure's extent that no decoded instruction
// covers ("gaps", which still get statements), split at line-table rows so
// each piece has one line. Where instructions have one width and no CFG
// decodes them (cubins), each instruction is a piece, with the line and
// inline context of its first byte, as hpcstruct walks such code.
func Gaps(in Input) []structure.Range {
	fn := in.Func
	if in.Hpcstruct && fn.Found {
		// hpcstruct fills gaps only in procedures a symbol names: those
		// ParseAPI found by a call get the code their parse reaches.
		return nil
	}
	var covered []structure.Range
	if in.Claimed {
		covered = append(covered, in.Covered...)
	} else if in.Graph != nil {
		for _, blk := range in.Graph.Blocks {
			covered = append(covered, structure.Range{Lo: blk.Start, Hi: blk.End})
		}
	}
	covered = structure.MergeRanges(append(covered, in.GroupCovered...))
	end := max(fn.End, in.GroupEnd)
	var out []structure.Range
	split := func(lo, hi uint64) {
		if w := in.Img.InstSize; w > 0 {
			for ; lo < hi; lo += w {
				out = append(out, structure.Range{Lo: lo, Hi: min(lo+w, hi)})
			}
			return
		}
		for lo < hi {
			end := hi
			if r, ok := in.Img.Lines.Lookup(lo); ok && r.End < end {
				end = r.End
			} else if !ok {
				if nx := in.Img.Lines.NextStart(lo); nx > lo && nx < end {
					end = nx
				}
			}
			out = append(out, structure.Range{Lo: lo, Hi: end})
			lo = end
		}
	}
	at := fn.Addr
	for _, c := range covered {
		if c.Lo > at && at < end {
			split(at, min(c.Lo, end))
		}
		at = max(at, c.Hi)
	}
	if at < end {
		split(at, end)
	}
	return out
}

func place(root *node, ln *loopNode) {
	n := root
	for _, k := range ln.path {
		n = n.child(k)
	}
	n.loops = append(n.loops, ln)
}

type exit struct {
	path []*inlKey
	key  stmtKey
}

// header is a loop's absolute inline context, header file and line, and
// entry. All of the loop's code is placed relative to that context, even
// code whose own inline chain is shallower (hoisted code).
type header struct {
	abs   []*inlKey
	key   stmtKey
	entry uint64
}

// header finds, top-down, a loop's entry, the inline context shared by its
// exit conditions (blocks with edges both inside and outside the loop) and
// entries, and its header file and line; parent is the absolute context of
// the enclosing loop. Compat mode re-places loops bottom-up (locate.go).
func (b *builder) header(l *havlak.Loop, parent []*inlKey) header {
	g := b.in.Graph
	sh := ShapeOf(g, l)
	var exits []exit
	for _, v := range sh.Exits {
		last := g.Blocks[v].Last()
		exits = append(exits, exit{b.path(last.Addr), b.line(last.Addr)})
	}
	var entries []uint64
	for _, v := range sh.Entries {
		entries = append(entries, g.Blocks[v].Start)
	}
	entry := sh.Entry
	var abs []*inlKey
	if len(exits) == 0 {
		exits = append(exits, exit{b.path(entry), b.line(entry)})
	}
	// The loop sits in the inline context shared by its exits and entries,
	// but never above the enclosing loop's context.
	abs = exits[0].path
	for _, e := range exits[1:] {
		abs = abs[:commonLen(abs, e.path)]
	}
	for _, a := range entries {
		abs = abs[:commonLen(abs, b.path(b.firstLined(a)))]
	}
	if len(abs) < len(parent) && commonLen(abs, parent) == len(abs) {
		abs = parent
	}
	best, found := stmtKey{}, false
	for _, e := range exits {
		k := e.key
		if len(e.path) > len(abs) {
			// seen from the loop's context, a deeper exit is at its call site
			k = stmtKey{e.path[len(abs)].callFile, e.path[len(abs)].callLine}
		}
		if !found || better(k, best) {
			best, found = k, true
		}
	}
	if best.line == 0 && !b.in.Hpcstruct && b.in.BodyLines {
		best = b.bodyLine(l, abs)
	}
	if best.line == 0 {
		best.file = "" // no line: the loop is in its context's file
	}
	return header{abs: abs, key: best, entry: entry}
}

// loopPlan is one loop's blocks and nested loops once irreducible regions
// are merged, with its header.
type loopPlan struct {
	l    *havlak.Loop
	own  []int // blocks in no nested plan
	kids []*loopPlan
	h    header
}

// plan decides l's header (seen from parent, the enclosing loop's absolute
// context) and which nested loops stay loops.
func (b *builder) plan(l *havlak.Loop, parent []*inlKey) *loopPlan {
	p := &loopPlan{l: l, h: b.header(l, parent)}
	if b.in.Hpcstruct {
		for _, c := range l.Children {
			p.kids = append(p.kids, b.plan(c, nil))
		}
		p.own = append([]int(nil), l.Nodes...)
		return p
	}
	// Dyninst sees an irreducible region as one loop where Havlak nests one
	// loop per DFS header: irreducible children of an irreducible loop, and
	// those with the parent's header line, are merged into the parent.
	p.own = append([]int(nil), l.Nodes...)
	kids := append([]*havlak.Loop(nil), l.Children...)
	for i := 0; i < len(kids); i++ {
		c := kids[i]
		if !c.Irreducible || (!l.Irreducible && b.header(c, p.h.abs).key != p.h.key) {
			continue
		}
		p.own = append(p.own, c.Nodes...)
		kids = append(kids, c.Children...)
		kids[i] = nil
	}
	for _, c := range kids {
		if c != nil {
			p.kids = append(p.kids, b.plan(c, p.h.abs))
		}
	}
	return p
}

// loop builds one loop's subtree. parent is the absolute context of the
// enclosing loop.
func (b *builder) loop(l *havlak.Loop, parent []*inlKey) *loopNode {
	p := b.plan(l, parent)
	if b.in.Hpcstruct {
		b.locate(p)
	}
	return b.fill(p, parent)
}

// fill places a planned loop's code and nested loops under parent.
func (b *builder) fill(p *loopPlan, parent []*inlKey) *loopNode {
	g := b.in.Graph
	h := p.h
	ln := &loopNode{entry: h.entry, file: h.key.file, line: h.key.line, path: rel(h.abs, parent), body: newNode()}
	for _, c := range p.kids {
		cl := b.fill(c, h.abs)
		// A loop's header line is never below a sub-loop's in the same
		// context and file (hpcstruct: the outer loop starts first).
		// locate has already applied hpcstruct's own rule.
		if !b.in.Hpcstruct && len(cl.path) == 0 && cl.file == ln.file && cl.line > 0 && cl.line < ln.line {
			ln.line = cl.line
		}
		place(ln.body, cl)
	}
	for _, v := range p.own {
		b.addBlock(ln.body, g.Blocks[v], h.abs)
	}
	return ln
}

// firstLined is the first instruction of the block at a that has a line
// (compilers give hoisted and scheduling code line 0), else a.
func (b *builder) firstLined(a uint64) uint64 {
	g := b.in.Graph
	i := sort.Search(len(g.Blocks), func(i int) bool { return g.Blocks[i].Start >= a })
	if i == len(g.Blocks) || g.Blocks[i].Start != a {
		return a
	}
	for _, in := range g.Blocks[i].Insts {
		if b.line(in.Addr).line != 0 {
			return in.Addr
		}
	}
	return a
}

func commonLen(a, b []*inlKey) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// rel is path q seen from context base: what follows their common prefix.
func rel(q, base []*inlKey) []*inlKey {
	return q[commonLen(q, base):]
}

// better prefers known lines, then smaller ones.
func better(a, b stmtKey) bool {
	if (a.line == 0) != (b.line == 0) {
		return a.line != 0
	}
	if a.line != b.line {
		return a.line < b.line
	}
	return a.file < b.file
}

// bodyLine is the smallest line of l's own code in context abs. It is the
// header line of a loop whose exit conditions have none where branches
// carry no line (Input.BodyLines: clang writes line 0 on every AMD GPU
// branch), where the code of a loop starts with its loop statement's
// compare or increment. (On CPUs the exit conditions' line, or none, is
// what measures most accurate, and hpcstruct writes 0 in both cases.)
func (b *builder) bodyLine(l *havlak.Loop, abs []*inlKey) stmtKey {
	var best stmtKey
	for _, v := range l.Nodes {
		for _, in := range b.in.Graph.Blocks[v].Insts {
			if k := b.line(in.Addr); k.line != 0 && (best.line == 0 || better(k, best)) && samePath(b.path(in.Addr), abs) {
				best = k
			}
		}
	}
	return best
}
