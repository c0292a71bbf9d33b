package diff

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"bloop/structure"
)

// The scope tree Diff works on: procedures, loops and inlined calls, each
// with the statements directly inside it.

// scope is a loop, an inlined call or a procedure body, with the
// statements directly in it. Aliens that are not the callee of an inline
// pair (guards, lone alien contexts, call sites themselves; see
// structure.Interpret) are transparent: they only set the file of what
// they contain.
type scope struct {
	kind  byte   // 'P', 'L' or 'I' (inlined call: call-site A + callee A)
	key   string // exact match: kind, file and line (I: callee, its file, call site)
	fuzzy string // "moved" pairing: L: file; I: callee and its file
	line  int    // L: header line; I: the callee's line
	site  string // I: call site "file:line"
	// callee: I: the function inlined, as function.callee (name, file).
	callee declName
	v      string // own v (P, L)
	lo     uint64 // lowest address in the subtree, for order
	path   string
	kids   []*scope
	stmts  []stmt
	node   *structure.Node // the element: P, L, or the callee A of an inlined call
}

type stmt struct {
	file, line string
	rs         []structure.Range
	inLoop     bool
	node       *structure.Node
}

type proc struct {
	name, pretty, file string
	path               string // the F's name as written
	body               *scope
	node               *structure.Node
	// module: the ordinal of its LM in the document, from 1.
	module int
}

// collectProcs lists the procedures of a canonical document in order.
func collectProcs(d *structure.Doc) []*proc {
	var out []*proc
	module := 0
	var walk func(n *structure.Node, file, path string)
	walk = func(n *structure.Node, file, path string) {
		for _, c := range n.Children {
			switch c.Tag {
			case "F":
				walk(c, c.Value("n"), c.Original().Value("n"))
			case "P":
				name, ok := c.Get("ln")
				if !ok {
					name = c.Value("n")
				}
				body := &scope{kind: 'P', v: c.Value("v"), node: c}
				buildScope(structure.Interpret(structure.ScopeOf(c, path), structure.FileCtx(path)), body, false)
				finish(body)
				// Show n only when it says more than ln: not for C names in
				// shared libraries ("f [lib.so]").
				pretty := c.Value("n")
				if pretty == name || (strings.HasPrefix(pretty, name+" [") && strings.HasSuffix(pretty, "]")) {
					pretty = ""
				}
				out = append(out, &proc{name: name, pretty: pretty, file: file, path: path, body: body, node: c, module: module})
				walk(c, file, path) // nested procedures
			case "LM":
				module++
				walk(c, "", "")
			}
		}
	}
	walk(d.Root, "", "")
	return out
}

// buildScope adds the children of it to s.
func buildScope(it structure.Item, s *scope, inLoop bool) {
	for c := range it.Children() {
		addChild(c, s, inLoop)
	}
}

func addChild(it structure.Item, s *scope, inLoop bool) {
	file, l := structure.BaseName(it.File), strconv.Itoa(it.Line)
	switch it.Role {
	case structure.RoleStmt:
		s.stmts = append(s.stmts, stmt{file, l, it.Ranges, inLoop, it.Src})
	case structure.RoleLoop:
		ls := &scope{kind: 'L', key: "L\x00" + file + "\x00" + l, fuzzy: file, line: it.Line,
			v: it.Src.Value("v"), path: joinPath(s.path, "L("+file+":"+l+")"), node: it.Src}
		s.kids = append(s.kids, ls)
		buildScope(it, ls, true)
	case structure.RoleInlined:
		if it.Site == nil {
			buildScope(it, s, inLoop) // a lone alien context: transparent
			return
		}
		site := structure.BaseName(it.Site.File) + ":" + strconv.Itoa(it.Site.Line)
		is := &scope{kind: 'I', key: "I\x00" + it.Name + "\x00" + file + "\x00" + site,
			fuzzy: it.Name + "\x00" + file, site: site, callee: declName{prettyBase(it.Name), file}, line: it.Line,
			path: joinPath(s.path, "A("+site+":)/A("+file+":"+l+":"+it.Name+")"), node: it.Src}
		s.kids = append(s.kids, is)
		buildScope(it, is, inLoop)
	case structure.RoleGuard, structure.RoleCallSite:
		buildScope(it, s, inLoop) // transparent: they only set the file of what they contain
	}
	// Nested P are separate procedures (collectProcs).
}

// finish computes lo bottom-up and orders kids by it.
func finish(s *scope) uint64 {
	lo := ^uint64(0)
	if rs, err := structure.ParseRanges(s.v); err == nil && len(rs) > 0 {
		lo = rs[0].Lo
	}
	for _, st := range s.stmts {
		if len(st.rs) > 0 {
			lo = min(lo, st.rs[0].Lo)
		}
	}
	for _, k := range s.kids {
		lo = min(lo, finish(k))
	}
	sortScopes(s.kids)
	s.lo = lo
	return lo
}

func sortScopes(ss []*scope) {
	slices.SortStableFunc(ss, func(a, b *scope) int {
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
}

// statementMoves reports source lines that are inside a loop in one
// body and not in the other. Line 0 (unknown) is ignored, as are lines
// present on one side only.
func (d *differ) statementMoves(as, bs []*scope) {
	var na, nb map[string][]*structure.Node
	if d.opts.Detail {
		na, nb = map[string][]*structure.Node{}, map[string][]*structure.Node{}
	}
	ia, ib := loopLines(as, na), loopLines(bs, nb)
	var keys []string
	for k := range ia {
		if _, ok := ib[k]; ok && ia[k] != ib[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		kind := StmtIntoLoop
		if ia[k] {
			kind = StmtOutOfLoop
		}
		d.add(Change{Kind: kind, Path: k, InA: na[k], InB: nb[k]})
	}
}

// loopLines maps "file:line" of every statement to whether it is inside a
// loop; nodes, when not nil, gets the statements of each.
func loopLines(ss []*scope, nodes map[string][]*structure.Node) map[string]bool {
	m := map[string]bool{}
	for _, s := range ss {
		eachStmt(s, func(st stmt, _ *scope) {
			if st.line == "0" {
				return
			}
			k := st.file + ":" + st.line
			m[k] = m[k] || st.inLoop
			if nodes != nil {
				nodes[k] = append(nodes[k], st.node)
			}
		})
	}
	return m
}

// eachStmt calls f for every statement below s, with the scope it is
// directly in.
func eachStmt(s *scope, f func(stmt, *scope)) {
	for _, st := range s.stmts {
		f(st, s)
	}
	for _, k := range s.kids {
		eachStmt(k, f)
	}
}

// lineHomes maps "file:line" of every statement below ss to the paths of
// the scopes that hold it directly ("" for a procedure's body), sorted.
func lineHomes(ss []*scope) map[string][]string {
	m := map[string][]string{}
	for _, s := range ss {
		eachStmt(s, func(st stmt, in *scope) {
			if st.line == "0" {
				return
			}
			k := st.file + ":" + st.line
			if !slices.Contains(m[k], in.path) {
				m[k] = append(m[k], in.path)
			}
		})
	}
	for _, ps := range m {
		slices.Sort(ps)
	}
	return m
}

// nowIn is where the lines of a scope of a are in b: the paths of the
// scopes of b holding them, sorted, empty when none is in b.
func (d *differ) nowIn(s *scope) []string {
	var out []string
	eachStmt(s, func(st stmt, _ *scope) {
		for _, p := range d.homeB[st.file+":"+st.line] {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	})
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// compareStmts compares, per file and line, the addresses of the
// statements directly inside matched scopes.
func (d *differ) compareStmts(as, bs []*scope) {
	var na, nb map[string][]*structure.Node
	if d.opts.Detail {
		na, nb = map[string][]*structure.Node{}, map[string][]*structure.Node{}
	}
	ma, mb := stmtRanges(as, na), stmtRanges(bs, nb)
	var keys []string
	for k := range ma {
		keys = append(keys, k)
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		va, vb := "(none)", "(none)"
		if rs, ok := ma[k]; ok {
			va = structure.FormatRanges(structure.MergeRanges(slices.Clone(rs)))
		}
		if rs, ok := mb[k]; ok {
			vb = structure.FormatRanges(structure.MergeRanges(slices.Clone(rs)))
		}
		if va != vb {
			d.add(Change{Kind: AddressChanged, Path: joinPath(as[0].path, "S("+k+")"), Old: va, New: vb, InA: na[k], InB: nb[k]})
		}
	}
}

// stmtRanges maps "file:line" of the statements directly in ss to their
// ranges; nodes, when not nil, gets the statements of each.
func stmtRanges(ss []*scope, nodes map[string][]*structure.Node) map[string][]structure.Range {
	m := map[string][]structure.Range{}
	for _, s := range ss {
		for _, st := range s.stmts {
			k := st.file + ":" + st.line
			m[k] = append(m[k], st.rs...)
			if nodes != nil {
				nodes[k] = append(nodes[k], st.node)
			}
		}
	}
	return m
}
