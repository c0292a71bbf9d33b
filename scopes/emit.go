package scopes

import (
	"path/filepath"
	"sort"

	"bloop/structure"
)

// context is what guard aliens are judged against: the enclosing procedure's
// or inlined callee's file, and the line below which code is foreign.
type context struct {
	file      string
	threshold int
	// rank, when set, orders call files as hpcstruct's string table
	// does (fileRanks); callees then take their file by it.
	rank map[string]int
	// hpcstruct keys guard aliens as hpcstruct does (compat).
	hpcstruct bool
}

func base(f string) string { return filepath.Base(f) }

// emit turns a context node into ordered child scopes.
func emit(n *node, ctx context) []*structure.Scope {
	var stmts, calls, guards, loops, inls []*structure.Scope
	guardBy := map[string]*structure.Scope{}
	// foreign code (another file, or a line below the procedure's) goes into
	// a guard alien per file, as hpcstruct writes it. hpcstruct keys its
	// guards by the file's base name, as it judges what is foreign, and
	// names one by the file of its lowest-addressed statement, else of its
	// first loop: in libc.so.6's __getcwd_generic (posix/getcwd.c:269),
	// line 106 of linux/getcwd.c, the caller's file, shares the guard of
	// posix/getcwd.c's lines 173-267, which it gives its line.
	firstAt := map[*structure.Scope]uint64{} // compat: a guard's lowest statement address
	guard := func(file string, line int, lo uint64, stmt bool) *structure.Scope {
		foreign := file != "" && ctx.file != "" && base(file) != base(ctx.file)
		if !foreign && !(line > 0 && line < ctx.threshold) {
			return nil
		}
		key := file
		if ctx.hpcstruct {
			key = base(file)
		}
		g := guardBy[key]
		if g == nil {
			g = structure.NewGuard(file)
			guardBy[key] = g
			guards = append(guards, g)
			if stmt {
				firstAt[g] = lo
			}
		} else if l, ok := firstAt[g]; stmt && (!ok || lo < l) {
			g.File, firstAt[g] = file, lo
		}
		return g
	}
	var line0 *structure.Scope
	for k, rs := range n.stmts {
		if k.line == 0 {
			// Line 0 is "no line": one statement per scope, whatever file
			// the rows name, and never foreign.
			if line0 == nil {
				line0 = &structure.Scope{Kind: structure.Stmt}
				stmts = append(stmts, line0)
			}
			line0.Ranges = append(line0.Ranges, rs...)
			continue
		}
		s := &structure.Scope{Kind: structure.Stmt, File: k.file, Line: k.line, Ranges: structure.MergeRanges(append([]structure.Range(nil), rs...))}
		if g := guard(k.file, k.line, s.Ranges[0].Lo, true); g != nil {
			g.Children = append(g.Children, s)
			continue
		}
		stmts = append(stmts, s)
	}
	for _, c := range n.calls {
		s := &structure.Scope{Kind: structure.Stmt, File: c.key.file, Line: c.key.line, Ranges: []structure.Range{c.r}, Call: &structure.CallSite{Target: c.target, Device: c.device}}
		if c.key.line != 0 {
			// Foreign as a statement of its file and line would be.
			if g := guard(c.key.file, c.key.line, c.r.Lo, true); g != nil {
				g.Children = append(g.Children, s)
				continue
			}
		}
		calls = append(calls, s)
	}
	for _, ln := range n.loops {
		l := &structure.Scope{Kind: structure.Loop, File: ln.file, Line: ln.line, Entry: ln.entry}
		if l.File == "" {
			l.File = ctx.file // no line info: the loop is in the procedure's file
		}
		// Inside a loop the loop's file is the context, and lines are not judged.
		l.Children = emit(ln.body, context{file: l.File, rank: ctx.rank, hpcstruct: ctx.hpcstruct})
		// hpcstruct judges a loop by its header's file and line; one with
		// line 0 is, like a statement with line 0, never foreign (the
		// stl_heap.h loops of __make_heap in stl-clang14-O3, a procedure
		// of stl_iterator.h; no line-0 loop of the references and corpus
		// is in a guard).
		if ctx.rank != nil && ln.line == 0 {
			loops = append(loops, l)
			continue
		}
		if g := guard(ln.file, ln.line, 0, false); g != nil {
			g.Children = append(g.Children, l)
			continue
		}
		loops = append(loops, l)
	}
	if line0 != nil {
		line0.Ranges = structure.MergeRanges(line0.Ranges)
	}
	for _, g := range guards {
		g.Line = guardLine(g)
		sortChildren(g.Children)
	}
	for k, kid := range n.kids {
		inls = append(inls, emitInline(k, kid, ctx))
	}
	sortStmts(stmts)
	sortStmts(calls)
	sort.Slice(guards, func(i, j int) bool {
		if guards[i].Line != guards[j].Line {
			return guards[i].Line < guards[j].Line
		}
		return guards[i].File < guards[j].File
	})
	sort.Slice(loops, func(i, j int) bool { return loops[i].Entry < loops[j].Entry })
	sort.Slice(inls, func(i, j int) bool {
		a, b := inls[i], inls[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Children[0].Name != b.Children[0].Name {
			return a.Children[0].Name < b.Children[0].Name
		}
		return lowest(a) < lowest(b)
	})
	out := make([]*structure.Scope, 0, len(stmts)+len(calls)+len(guards)+len(loops)+len(inls))
	out = append(out, stmts...)
	out = append(out, calls...)
	out = append(out, guards...)
	out = append(out, loops...)
	return append(out, inls...)
}

// emitInline makes the inline pair (call site, callee) of inlined call k,
// whose code is kid, in the context ctx.
func emitInline(k *inlKey, kid *node, ctx context) *structure.Scope {
	callFile, callLine := k.callFile, k.callLine
	if k.unknown {
		callFile, callLine = unknownFile, 0
	}
	site := &structure.Scope{Kind: structure.Alien, File: callFile, Line: callLine}
	cal := structure.NewCallee(k.name, k.calleeFile)
	// hpcstruct takes the callee's file from its code (where its
	// nested calls are made, else its loops or statements), not from
	// its declaration, which is only the last resort.
	cctx := context{file: calleeFileOf(kid, ctx.rank), rank: ctx.rank, hpcstruct: ctx.hpcstruct}
	if cctx.file == "" {
		cctx.file = k.calleeFile
	}
	cal.File = cctx.file
	// hpcstruct treats lines of the callee's own file that lie below its
	// first loop or inlined call as foreign code of that callee.
	lower := func(l int) {
		if l > 0 && (cctx.threshold == 0 || l < cctx.threshold) {
			cctx.threshold = l
		}
	}
	// hpcstruct's locateTree takes that line from the nested calls and
	// loops of the callee's own file (base name) only: a node that holds
	// two namesakes' code (libm's deval of e_j0l.c and e_j1l.c, one
	// node for hpcstruct, see builder.path) keeps the other file's loops
	// out of it.
	own := func(f string) bool { return !ctx.hpcstruct || base(f) == base(cctx.file) }
	for ck := range kid.kids {
		if !ck.unknown && own(ck.callFile) {
			lower(ck.callLine)
		}
	}
	for _, ln := range kid.loops {
		if own(ln.file) {
			lower(ln.line)
		}
	}
	cal.Children = emit(kid, cctx)
	cal.Line = minLine(cal.Children)
	if cal.File == unknownFile {
		// Nothing of the file "<unknown>" has a line: hpcstruct
		// writes 0.
		cal.Line = 0
	}
	site.Children = []*structure.Scope{cal}
	return site
}

// guardLine is a guard alien's line: its first loop's when it holds loops,
// else its smallest statement line.
func guardLine(g *structure.Scope) int {
	line := 0
	for _, c := range g.Children {
		if c.Kind == structure.Loop && (line == 0 || c.Line < line) {
			line = c.Line
		}
	}
	if line != 0 {
		return line
	}
	for _, c := range g.Children {
		if c.Kind == structure.Stmt && c.Line > 0 && (line == 0 || c.Line < line) {
			line = c.Line
		}
	}
	return line
}

// sortChildren orders statements by line, then call sites by line, then
// loops by entry.
func sortChildren(cs []*structure.Scope) {
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.Kind != b.Kind {
			return a.Kind == structure.Stmt
		}
		if (a.Call == nil) != (b.Call == nil) {
			return a.Call == nil
		}
		if a.Kind == structure.Loop {
			return a.Entry < b.Entry
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Ranges[0].Lo < b.Ranges[0].Lo
	})
}

func sortStmts(s []*structure.Scope) {
	sort.Slice(s, func(i, j int) bool {
		if s[i].Line != s[j].Line {
			return s[i].Line < s[j].Line
		}
		if s[i].File != s[j].File {
			return s[i].File < s[j].File
		}
		return s[i].Ranges[0].Lo < s[j].Ranges[0].Lo
	})
}

// minLine is the callee's line: the smallest known line of its own code
// (statements outside guards, loops, and call sites of nested inlines).
func minLine(children []*structure.Scope) int {
	best := 0
	for _, c := range children {
		if c.IsGuard() || c.Line <= 0 {
			continue
		}
		if best == 0 || c.Line < best {
			best = c.Line
		}
	}
	return best
}

// firstFile is the file of the lowest-addressed statement directly in n.
func firstFile(n *node) string {
	lined, linedLo := "", ^uint64(0)
	zero, zeroLo := "", ^uint64(0)
	for k, rs := range n.stmts {
		for _, r := range rs {
			switch {
			case k.line != 0 && r.Lo < linedLo:
				lined, linedLo = k.file, r.Lo
			case k.line == 0 && r.Lo < zeroLo:
				zero, zeroLo = k.file, r.Lo
			}
		}
	}
	if linedLo != ^uint64(0) {
		return lined
	}
	return zero // code with line 0 only: the file its rows name
}

// lowestFile is the file of the lowest-addressed statement directly in n,
// a line-0 row's included: hpcstruct's first statement (clang's
// _Iter_less_iter::operator() inlined in stl-clang14-O2's
// __final_insertion_sort starts with a line-0 row of stl_algo.h, and
// hpcstruct names the callee stl_algo.h:0 and guards its line 45 of
// predefined_ops.h).
func lowestFile(n *node) string {
	best, lo := "", ^uint64(0)
	for k, rs := range n.stmts {
		for _, r := range rs {
			if r.Lo < lo || r.Lo == lo && k.file < best {
				best, lo = k.file, r.Lo
			}
		}
	}
	return best
}

// calleeFileOf is the file of an inlined callee's code n. With a rank
// (compat mode) it is hpcstruct's locateTree: the first nested call's
// file, else the first loop's, else the first statement's (lowestFile).
// Otherwise a
// lineless callee takes its first loop's file before its statements'.
func calleeFileOf(n *node, rank map[string]int) string {
	f := callFileOf(n, rank)
	if rank != nil {
		if f == "" {
			f = loopFile(n)
		}
		if f == "" {
			f = lowestFile(n)
		}
		return f
	}
	if f == "" {
		f = firstFile(n)
	}
	if f == "" || !hasLines(n) {
		if lf := loopFile(n); lf != "" {
			f = lf
		}
	}
	return f
}

// unknownFile is the call-site file hpcstruct writes for a call site it
// cannot read (gcc 12's DW_FORM_implicit_const, compat mode only).
const unknownFile = "<unknown>"

// callFileOf is the call-site file of n's nested inline call that comes
// first: by rank when given (hpcstruct's string-table order), else by
// lowest address. An unread call site counts as the file "<unknown>", as
// it does in hpcstruct, where it is a file name like any other.
func callFileOf(n *node, rank map[string]int) string {
	best, lo := "", ^uint64(0)
	for k, kid := range n.kids {
		file := k.siteFile()
		if file == "" {
			continue
		}
		a := lowestNode(kid)
		if rank != nil {
			a = uint64(rankOf(rank, file))
		}
		if a < lo || (a == lo && file < best) {
			best, lo = file, a
		}
	}
	return best
}

// rankOf is a file's rank; a file the walk did not see comes last.
func rankOf(rank map[string]int, file string) int {
	if r, ok := rank[file]; ok {
		return r
	}
	return len(rank)
}

// loopFile is the header file of n's lowest-entry loop that has one.
func loopFile(n *node) string {
	best, lo := "", ^uint64(0)
	for _, l := range n.loops {
		if l.file != "" && l.entry < lo {
			best, lo = l.file, l.entry
		}
	}
	return best
}

func hasLines(n *node) bool {
	for k := range n.stmts {
		if k.line != 0 {
			return true
		}
	}
	return false
}

// lowestNode is the smallest address of code under n, computed once: the
// tree is complete when contexts are emitted.
func lowestNode(n *node) uint64 {
	if n.lowest != 0 {
		return n.lowest
	}
	lo := ^uint64(0)
	for _, rs := range n.stmts {
		for _, r := range rs {
			lo = min(lo, r.Lo)
		}
	}
	for _, k := range n.kids {
		lo = min(lo, lowestNode(k))
	}
	for _, l := range n.loops {
		lo = min(lo, lowestNode(l.body))
	}
	n.lowest = lo
	return lo
}

// lowest is the smallest address under s.
func lowest(s *structure.Scope) uint64 {
	lo := ^uint64(0)
	structure.Walk(s, func(x *structure.Scope) {
		if x.Kind == structure.Stmt && len(x.Ranges) > 0 && x.Ranges[0].Lo < lo {
			lo = x.Ranges[0].Lo
		}
	})
	return lo
}
