package cfg

import (
	"fmt"
	"slices"
	"sort"

	"bloop/isa"
	"bloop/loader"
)

// builder is one Build in progress: the phases (decoding walks, jump
// tables, blocks, edges) share what has been decoded so far.
type builder struct {
	img           *loader.Image
	ar            isa.Arch
	opt           Options
	dy            Dyninst // the policy's departures; zero without one
	entry, lo, hi uint64
	fellInto      []region // procedures entered by falling out (FallOut) or a jump (JumpInto)
	tableInto     []region // code entered through a jump table (Foreign)
	sweeps        map[region]bitset
	to            isa.Targets
	// Decoded instructions in decoding order, and where each address is
	// (index.go).
	all     []Inst
	at      instIndex
	leaders addrSet
	work    []uint64
	pending []uint64 // indirect jumps whose tables are not resolved yet
	calls   map[uint64]bool
	g       *Graph
}

// Build decodes the procedure [lo, hi) from entry by recursive traversal and
// splits the reached instructions into basic blocks.
func Build(img *loader.Image, entry, lo, hi uint64, opt Options) (*Graph, error) {
	ar := opt.Arch
	if ar == nil {
		ar = isa.ForTOC(img.Machine, img.TOC)
	}
	if ar == nil {
		return nil, fmt.Errorf("%w: %s", ErrArch, img.Arch)
	}
	if len(img.Bytes(lo, hi)) == 0 {
		return nil, fmt.Errorf("no code at %#x", lo)
	}
	hi = lo + uint64(len(img.Bytes(lo, hi)))
	b := newBuilder(img, ar, entry, lo, hi, opt)
	if err := b.decode(); err != nil {
		return nil, err
	}
	b.blocks()
	b.edges()
	e, ok := blockAt(b.g.Blocks, entry)
	if !ok {
		if u := b.dy.Decode.Undecodable; u != nil && u(img.Bytes(entry, entry+uint64(ar.MaxLen()))) {
			return nil, fmt.Errorf("%w at %#x", ErrDyninstEntry, entry)
		}
		return nil, fmt.Errorf("%w at %#x", ErrEntry, entry)
	}
	g := b.g
	g.Entry = e
	for t := range b.calls {
		g.Calls = append(g.Calls, t)
	}
	slices.Sort(g.Calls)
	return g, nil
}

func newBuilder(img *loader.Image, ar isa.Arch, entry, lo, hi uint64, opt Options) *builder {
	b := &builder{img: img, ar: ar, opt: opt, entry: entry, lo: lo, hi: hi, sweeps: map[region]bitset{},
		// x86-64 instructions average about 4 bytes.
		all:     make([]Inst, 0, (hi-lo)/3+16),
		at:      newInstIndex(lo, hi),
		leaders: newAddrSet(lo, hi),
		work:    []uint64{entry},
		calls:   map[uint64]bool{},
		g:       &Graph{},
	}
	b.leaders.add(entry)
	if opt.Dyninst != nil {
		b.dy = *opt.Dyninst
	}
	for _, r := range opt.Roots {
		if r >= lo && r < hi && r != entry {
			b.leaders.add(r)
			b.work = append(b.work, r)
		}
	}
	b.to = isa.Targets{
		// The procedure may jump into its own extent and the regions it
		// continues into (a .cold part).
		Valid: func(t uint64) bool {
			_, ok := b.regionOf(t, false)
			return ok
		},
		Start: func(t uint64) bool {
			r, ok := b.regionOf(t, false)
			// A region that starts at t (code no procedure starts at,
			// compat mode's continuation) starts an instruction there;
			// sweeping it for each such t would be quadratic.
			return ok && (t == r.lo || sweep(ar, img, r, b.sweeps).has(t-r.lo))
		},
		Dyninst: b.dy.Tables,
	}
	if b.dy.Tables && opt.Procs != nil {
		b.to.Code = func(t uint64) bool {
			_, ok := b.foreign(t)
			return ok
		}
	}
	return b
}

// regionOf is the region a target lies in. Outside the procedure's own
// extent, every target is asked again: a jump into a .cold part continues
// the procedure, a jump to its entry is a tail call.
func (b *builder) regionOf(a uint64, callNext bool) (region, bool) {
	if a >= b.lo && a < b.hi {
		return region{b.lo, b.hi}, true
	}
	for _, r := range b.tableInto {
		if a >= r.lo && a < r.hi {
			return r, true
		}
	}
	for _, r := range b.fellInto {
		if a > r.lo && a < r.hi { // a jump to its entry is a tail call
			return r, true
		}
	}
	if b.opt.Procs != nil {
		if rlo, rhi, ok := b.opt.Procs.Region(a, callNext); ok && len(b.img.Bytes(rlo, rhi)) > 0 {
			return region{rlo, rlo + uint64(len(b.img.Bytes(rlo, rhi)))}, true
		}
	}
	return region{}, false
}

// foreign is the code outside the procedure's regions a table entry
// leads to, as Dyninst parses it.
func (b *builder) foreign(t uint64) (region, bool) {
	if !b.dy.Tables || b.opt.Procs == nil {
		return region{}, false
	}
	rlo, rhi, ok := b.opt.Procs.Foreign(t)
	if !ok || t < rlo || t >= rhi {
		return region{}, false
	}
	n := uint64(len(b.img.Bytes(rlo, rhi)))
	return region{rlo, rlo + n}, t < rlo+n
}

// decode walks the code from every leader until no walk and no jump
// table is left.
func (b *builder) decode() error {
	for len(b.work) > 0 || len(b.pending) > 0 {
		if len(b.work) == 0 {
			b.resolveTables()
			continue
		}
		start := b.work[len(b.work)-1]
		b.work = b.work[:len(b.work)-1]
		if err := b.walk(start); err != nil {
			return err
		}
	}
	return nil
}

// resolveTables resolves the pending jump tables once all straight-line
// code before them is decoded: the table base may be loaded blocks
// earlier.
func (b *builder) resolveTables() {
	all, at := b.all, &b.at
	jumps := map[uint64][]uint64{}
	for _, in := range all {
		if in.Kind == isa.Jump || in.Kind == isa.CondJump {
			jumps[in.Target] = append(jumps[in.Target], in.Addr)
		}
	}
	chain := isa.TableReach(b.ar) // how far back jump tables are looked for
	for _, a := range b.pending {
		i, _ := at.get(a)
		in := &all[i]
		in.Table = b.ar.JumpTable(b.img, backChain(all, at, jumps, a, chain, b.ar.MaxLen()), in.Inst, b.to)
		for _, t := range in.Table {
			if _, ok := b.regionOf(t, false); ok {
				b.leaders.add(t)
				b.work = append(b.work, t)
			} else if r, ok := b.foreign(t); ok {
				b.tableInto = append(b.tableInto, r)
				if t == r.lo {
					b.g.Continued = append(b.g.Continued, t)
				}
				b.leaders.add(t)
				b.work = append(b.work, t)
			}
		}
	}
	b.pending = b.pending[:0]
}

// walk decodes straight-line code from start until control leaves it,
// queueing the targets of its branches.
func (b *builder) walk(start uint64) error {
	reg, ok := b.regionOf(start, false)
	sinceCall := 2     // instructions decoded since the last call on this walk
	from := len(b.all) // the instructions of this walk are all[from:]
	for a := start; ok && a >= reg.lo && a < reg.hi; {
		if _, seen := b.at.get(a); seen {
			b.leaders.add(a)
			break
		}
		if len(b.all) >= maxInsts {
			return fmt.Errorf("more than %d instructions", maxInsts)
		}
		in, stop := b.decodeAt(a, reg, b.all[from:])
		if stop {
			break
		}
		if in.Kind == isa.Invalid {
			// Right after a call, bytes that do not decode say the
			// callee does not return: ppc64 puts the traceback table
			// after a last call to a noreturn procedure and the nop
			// that would restore the TOC pointer; the other sets get
			// the same allowance, for the padding compilers put after
			// such calls. Not undecodable code.
			if sinceCall > 1 {
				b.g.Undecodable += in.Len
			}
			break
		}
		sinceCall++
		if in.Kind == isa.Call || in.Kind == isa.IndirectCall {
			sinceCall = 0
			// Even a call to the next instruction, parsed as a jump.
			b.landingPad(in.Addr)
		}
		if in.Kind == isa.Call && in.Target == in.End() {
			// Dyninst parses a call to the next instruction as a jump.
			if r, ok := b.regionOf(in.Target, true); ok {
				in.Kind = isa.Jump
				b.leaders.add(in.Target)
				b.g.Continued = append(b.g.Continued, in.Target)
				b.add(in)
				reg = r
				a = in.Target
				continue
			}
		}
		next := b.follow(in, start, from)
		b.add(in)
		if !next {
			break
		}
		a = in.End()
		if a == reg.hi && b.dy.FallOut {
			if r, ok := b.regionOf(a, true); ok && r != reg {
				b.g.Continued = append(b.g.Continued, a)
				b.fellInto = append(b.fellInto, r)
				reg = r
			}
		}
	}
	return nil
}

// add records a decoded instruction.
func (b *builder) add(in Inst) {
	b.at.set(in.Addr, int32(len(b.all)))
	b.all = append(b.all, in)
}

// decodeAt decodes the instruction at a, read as the policy says; stop
// says Dyninst's decoder fails on it, so its block ends before it and
// the bytes stay a gap.
func (b *builder) decodeAt(a uint64, reg region, walk []Inst) (in Inst, stop bool) {
	in = Inst{Inst: b.ar.Decode(b.img.Bytes(a, reg.hi), a)}
	dd := &b.dy.Decode
	if dd.Kind != nil {
		in.Kind = dd.Kind(in.Inst)
	}
	if dd.Undecodable != nil && in.Kind == isa.Other && dd.Undecodable(b.img.Bytes(a, in.End())) {
		return in, true
	}
	if dd.NoReturnSyscall != nil && in.Kind == isa.Other && dd.NoReturnSyscall(b.img, walkBack(walk), in.Inst) {
		in.Kind = isa.Halt
	}
	// A word cut short by the region's end is no instruction, even to
	// Dyninst's decoder: the graph stays inside the procedure.
	if in.Kind == isa.Invalid && dd.AnyWord && in.Len == b.ar.Align() && len(b.img.Bytes(a, reg.hi)) >= in.Len {
		in.Kind = isa.Other
	}

	return in, false
}

// follow queues the targets of in, the latest instruction of the walk
// from start whose earlier instructions are all[from:], and reports
// whether control falls through it.
func (b *builder) follow(in Inst, start uint64, from int) bool {
	// A direct jump may also land in another procedure's code, unless
	// Dyninst takes it for a tail call.
	jump := func(t uint64) {
		if _, ok := b.regionOf(t, false); !ok && b.opt.Dyninst != nil && b.opt.Procs != nil &&
			!tailJump(b.ar, b.dy.Decode.TailMark, b.img, b.all[from:], start, b.entry, &b.at, b.all) {
			if rlo, rhi, ok := b.opt.Procs.JumpInto(t); ok && t > rlo && t < rhi && len(b.img.Bytes(rlo, rhi)) > 0 {
				b.fellInto = append(b.fellInto, region{rlo, rlo + uint64(len(b.img.Bytes(rlo, rhi)))})
			}
		}
		b.branch(t)
	}
	switch in.Kind {
	case isa.Jump:
		jump(in.Target)
		return false
	case isa.CondJump:
		jump(in.Target)
		b.leaders.add(in.End())
	case isa.IndirectJump:
		b.pending = append(b.pending, in.Addr)
		return false
	case isa.Call:
		b.calls[in.Target] = true
		b.leaders.add(in.End())
		if b.opt.NoReturn != nil && b.opt.NoReturn(in.Target) {
			return false
		}
	case isa.IndirectCall:
		b.leaders.add(in.End())
	case isa.Return, isa.Halt:
		return false
	}
	return true
}

// branch queues t for a walk if the procedure may go there.
func (b *builder) branch(t uint64) {
	if _, ok := b.regionOf(t, false); ok {
		b.leaders.add(t)
		b.work = append(b.work, t)
	}
}

// landingPad queues the landing pad of the call at a, if it has one.
func (b *builder) landingPad(a uint64) {
	if b.opt.LandingPad != nil {
		if pad, ok := b.opt.LandingPad(a); ok {
			b.branch(pad)
		}
	}
}

// blocks splits the decoded instructions, in address order, into basic
// blocks (allocated together: a sampled procedure of cc1plus has
// thousands), sorted by start as Graph.Blocks is: blockAt finds them.
func (b *builder) blocks() {
	g := b.g
	sorted := byAddress(b.all, &b.at)
	// A block ends after a control transfer, before a leader, and at a
	// hole in the code.
	ends := func(k int) bool {
		in := &sorted[k]
		return k+1 == len(sorted) || endsBlock(in.Kind) || b.leaders.has(sorted[k+1].Addr) || in.End() != sorted[k+1].Addr
	}
	n := 0
	for k := range sorted {
		in := &sorted[k]
		if k+1 < len(sorted) && in.End() > sorted[k+1].Addr {
			in.shared = uint8(in.End() - sorted[k+1].Addr)
			g.Overlaps++
		}
		if ends(k) {
			n++
		}
	}
	slab := make([]Block, 0, n)
	g.Blocks = make([]*Block, 0, n)
	start := 0
	for k := range sorted {
		if ends(k) {
			slab = append(slab, Block{Start: sorted[start].Addr, End: sorted[k].End(), Insts: sorted[start : k+1 : k+1]})
			g.Blocks = append(g.Blocks, &slab[len(slab)-1])
			start = k + 1
		}
	}
}

// blockAt is the index of the block that starts at a.
func blockAt(blocks []*Block, a uint64) (int, bool) {
	i := sort.Search(len(blocks), func(i int) bool { return blocks[i].Start >= a })
	return i, i < len(blocks) && blocks[i].Start == a
}

// edges links the blocks.
func (b *builder) edges() {
	g := b.g
	for i, blk := range g.Blocks {
		last := blk.Last()
		add := func(t uint64) {
			if j, ok := blockAt(g.Blocks, t); ok {
				blk.Succs = append(blk.Succs, j)
			}
		}
		// A jump within the procedure that Dyninst takes for a tail call
		// is no edge; asked only of targets in the graph.
		jump := func(t uint64) {
			if _, ok := blockAt(g.Blocks, t); ok && !selfTail(b.ar, b.img, g.Blocks, i, b.entry, b.opt) {
				add(t)
			}
		}
		switch last.Kind {
		case isa.Jump:
			jump(last.Target)
		case isa.CondJump:
			jump(last.Target)
			add(last.End())
		case isa.IndirectJump:
			for _, t := range last.Table {
				add(t)
			}
		case isa.Return, isa.Halt:
		case isa.Call:
			if b.opt.NoReturn == nil || !b.opt.NoReturn(last.Target) {
				add(last.End())
			}
		default:
			add(last.End())
		}
		blk.Succs = uniq(blk.Succs)
		for _, s := range blk.Succs {
			g.Blocks[s].Preds = append(g.Blocks[s].Preds, i)
		}
	}
}
