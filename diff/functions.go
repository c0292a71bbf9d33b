package diff

import (
	"slices"
	"strconv"
	"strings"

	"bloop/structure"
)

// Procedures are compared by the source function they were made from,
// not by symbol: the clones and outlined parts of f belong to f
// (names.go), and a function out of line in one build and only inlined
// in the other is said to be so.

// function is one source function on one side: every procedure of its
// code, grouped by copy.
type function struct {
	key      string   // base link name and file (procKey's file rule)
	base     string   // the link name without clone suffixes
	callee   declName // what an inlined copy of it is called, with its file
	short    declName // its unqualified name without template arguments (shortName), with its file
	line     int      // its first procedure's line
	file     string
	procs    []*proc // in document order
	variants []*variant
}

// variant is one copy of a function's body: its entry procedure (nil
// when only outlined parts are left) and the parts outlined from it.
type variant struct {
	name  string // base and clone suffixes
	procs []*proc
}

// functions groups the procedures of one side by source function, in
// order of first appearance. An outlined part goes with a function of its
// base name in its module even when it is filed under another source
// file (a .cold part's first line may be in a header), its own file's
// first.
func functions(ps []*proc) []*function {
	var out []*function
	byKey := map[string]*function{}
	byBase := map[string][]*function{}
	add := func(p *proc, c cloneName, f *function) {
		if f == nil {
			k := c.base + "\x00" + fileKey(p.file)
			f = byKey[k]
			if f == nil {
				line, _ := strconv.Atoi(p.node.Value("l"))
				f = &function{key: k, base: c.base, file: p.file, line: line,
					callee: declName{prettyBase(p.node.Value("n")), fileKey(p.file)},
					short:  declName{shortName(p.node.Value("n")), fileKey(p.file)}}
				byKey[k] = f
				mk := moduleBase(p.module, c.base)
				byBase[mk] = append(byBase[mk], f)
				out = append(out, f)
			}
		}
		f.procs = append(f.procs, p)
		i := slices.IndexFunc(f.variants, func(v *variant) bool { return v.name == c.variant })
		if i < 0 {
			f.variants = append(f.variants, &variant{name: c.variant})
			i = len(f.variants) - 1
		}
		f.variants[i].procs = append(f.variants[i].procs, p)
	}
	var parts []*proc
	for _, p := range ps {
		c := nameOf(p)
		if c.parts != "" {
			parts = append(parts, p)
			continue
		}
		add(p, c, nil)
	}
	for _, p := range parts {
		c := nameOf(p)
		var home *function
		if fs := byBase[moduleBase(p.module, c.base)]; len(fs) > 0 {
			home = fs[0]
			if i := slices.IndexFunc(fs, func(f *function) bool { return fileKey(f.file) == fileKey(p.file) }); i >= 0 {
				home = fs[i]
			}
		}
		add(p, c, home)
	}
	for _, f := range out {
		slices.SortFunc(f.variants, func(x, y *variant) int { return strings.Compare(x.name, y.name) })
		slices.SortStableFunc(f.procs, func(x, y *proc) int { return strings.Compare(x.name, y.name) })
	}
	return out
}

// nameOf is a procedure's name split at its clone suffixes.
func nameOf(p *proc) cloneName {
	if isStub(p.name) {
		n := stubName(p.name)
		return cloneName{base: n, variant: n}
	}
	return parseClone(p.name)
}

func moduleBase(module int, base string) string {
	return strconv.Itoa(module) + "\x00" + base
}

// fileKey is the file a procedure is matched by: its base name, except
// that the pseudo file "[<binary basename>]" (code without line
// information) matches any other such name, so that builds of one source
// under different binary names can be compared.
func fileKey(f string) string {
	if strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]") {
		return "[]"
	}
	return f
}

// names lists the link names of the function's procedures, sorted.
func (f *function) names() []string {
	out := make([]string, len(f.procs))
	for i, p := range f.procs {
		out[i] = p.name
	}
	slices.Sort(out)
	return out
}

// parts counts the outlined parts of a variant.
func (v *variant) parts() int {
	n := 0
	for _, p := range v.procs {
		if parseClone(p.name).parts != "" {
			n++
		}
	}
	return n
}

// bodies are the scopes of the variant's procedures, compared as one.
func (v *variant) bodies() []*scope {
	out := make([]*scope, len(v.procs))
	for i, p := range v.procs {
		out[i] = p.body
	}
	return out
}

type functionPair struct{ a, b *function }

// pairFunctions pairs the functions of two sides by key, then those left
// over by base name where it is unique on both sides (a function whose
// procedures one compiler files under another source file). The rest are
// on one side only.
func pairFunctions(fa, fb []*function) (pairs []functionPair, onlyA, onlyB []*function) {
	idx := map[string]int{}
	for i, f := range fb {
		idx[f.key] = i
	}
	used := make([]bool, len(fb))
	var restA []*function
	for _, f := range fa {
		if i, ok := idx[f.key]; ok {
			pairs = append(pairs, functionPair{f, fb[i]})
			used[i] = true
		} else {
			restA = append(restA, f)
		}
	}
	var restB []*function
	for i, f := range fb {
		if !used[i] {
			restB = append(restB, f)
		}
	}
	countA, countB := baseCounts(restA), baseCounts(restB)
	byBase := map[string]*function{}
	for _, f := range restB {
		if countA[f.base] == 1 && countB[f.base] == 1 && !isStub(f.base) {
			byBase[f.base] = f
		}
	}
	paired := map[*function]bool{}
	for _, f := range restA {
		if g := byBase[f.base]; g != nil && countA[f.base] == 1 {
			pairs = append(pairs, functionPair{f, g})
			paired[f], paired[g] = true, true
		} else {
			onlyA = append(onlyA, f)
		}
	}
	for _, f := range restB {
		if !paired[f] {
			onlyB = append(onlyB, f)
		}
	}
	more, onlyA, onlyB := pairByDeclaration(onlyA, onlyB, func(f *function) declName { return f.short })
	pairs = append(pairs, more...)
	// A procedure is filed under its entry row's file, which may be a
	// header inlined there (gcc's __introsort_loop under stl_iterator.h):
	// last, the short name alone where it is unique on both sides.
	more, onlyA, onlyB = pairByDeclaration(onlyA, onlyB, shortOnly)
	return append(pairs, more...), onlyA, onlyB
}

// shortOnly is a function's short name without its file.
func shortOnly(f *function) declName { return declName{name: f.short.name} }

// declName is a name with the base name of its file: what a function is
// called, and what an inlined copy of it is.
type declName struct{ name, file string }

// pairByDeclaration pairs the functions left over by their short name
// and file, when each side has one such function, else by line too
// (within structure.LoopLineTol; a procedure's line is its entry row's,
// which compilers may take from different lines of a template): the
// instances of one template whose names two compilers spell differently
// (gcc's "<lambda(const Item&)>" and clang's "$_0", default template
// arguments written or not) are one source function.
func pairByDeclaration(fa, fb []*function, key func(*function) declName) (pairs []functionPair, onlyA, onlyB []*function) {
	byShort := map[declName][]*function{}
	for _, f := range fb {
		if !isStub(f.base) {
			byShort[key(f)] = append(byShort[key(f)], f)
		}
	}
	countA := map[declName]int{}
	for _, f := range fa {
		countA[key(f)]++
	}
	paired := map[*function]bool{}
	for _, f := range fa {
		if isStub(f.base) {
			continue
		}
		cands := byShort[key(f)]
		if len(cands) == 1 && countA[key(f)] == 1 {
			pairs = append(pairs, functionPair{f, cands[0]})
			paired[f], paired[cands[0]] = true, true
			continue
		}
		var best *function
		for _, g := range cands {
			if paired[g] || abs(g.line-f.line) > structure.LoopLineTol {
				continue
			}
			if best == nil || abs(g.line-f.line) < abs(best.line-f.line) {
				best = g
			}
		}
		if best != nil {
			pairs = append(pairs, functionPair{f, best})
			paired[f], paired[best] = true, true
		}
	}
	for _, f := range fa {
		if !paired[f] {
			onlyA = append(onlyA, f)
		}
	}
	for _, f := range fb {
		if !paired[f] {
			onlyB = append(onlyB, f)
		}
	}
	return pairs, onlyA, onlyB
}

func baseCounts(fs []*function) map[string]int {
	m := map[string]int{}
	for _, f := range fs {
		m[f.base]++
	}
	return m
}

// pairVariants pairs the copies of a function on two sides: copies of
// the same name, then the rest in name order (renamed: f against
// f.constprop.0); the copies left over are the clones one side has more.
func pairVariants(va, vb []*variant) (pairs [][2]*variant, renamed bool, extraA, extraB []*variant) {
	var restA []*variant
	used := make([]bool, len(vb))
	for _, x := range va {
		i := slices.IndexFunc(vb, func(y *variant) bool { return y.name == x.name })
		if i >= 0 {
			pairs = append(pairs, [2]*variant{x, vb[i]})
			used[i] = true
		} else {
			restA = append(restA, x)
		}
	}
	var restB []*variant
	for i, y := range vb {
		if !used[i] {
			restB = append(restB, y)
		}
	}
	n := min(len(restA), len(restB))
	for k := range n {
		pairs = append(pairs, [2]*variant{restA[k], restB[k]})
	}
	return pairs, n > 0, restA[n:], restB[n:]
}

// inlined is where one side holds inlined copies of functions: by what
// an inlined call is called (callee name and file, as function.callee),
// and by its short name and file with the callee's line (as
// function.short, line), the functions whose procedures hold one, by
// base name.
type inlined struct {
	byName  map[declName]map[string]bool
	byShort map[declName][]inlinedAt
}

type inlinedAt struct {
	line   int
	caller string
}

func inlinedCopies(ps []*proc) *inlined {
	in := &inlined{byName: map[declName]map[string]bool{}, byShort: map[declName][]inlinedAt{}}
	for _, p := range ps {
		caller := parseClone(p.name).base
		var walk func(s *scope)
		walk = func(s *scope) {
			for _, k := range s.kids {
				if k.kind == 'I' {
					if in.byName[k.callee] == nil {
						in.byName[k.callee] = map[string]bool{}
					}
					in.byName[k.callee][caller] = true
					short := declName{shortName(k.callee.name), k.callee.file}
					in.byShort[short] = append(in.byShort[short], inlinedAt{k.line, caller})
				}
				walk(k)
			}
		}
		walk(p.body)
	}
	return in
}

// callers are the functions holding inlined copies of f: by its name, or
// else by its short name and file (an instance of the same template, its
// name spelled otherwise), or else by its short name in the file of an
// inlined copy within structure.LoopLineTol of its line (f filed under a
// header its entry row is from).
func (in *inlined) callers(f *function) []string {
	set := in.byName[f.callee]
	if len(set) == 0 {
		set = map[string]bool{}
		for _, at := range in.byShort[f.short] {
			set[at.caller] = true
		}
	}
	if len(set) == 0 {
		for k, ats := range in.byShort {
			if k.name != f.short.name {
				continue
			}
			for _, at := range ats {
				if abs(at.line-f.line) <= structure.LoopLineTol {
					set[at.caller] = true
				}
			}
		}
	}
	var out []string
	for c := range set {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// ownLines are the source lines ("file:line", not 0) of the statements
// of the function's bodies outside the code inlined into them.
func ownLines(f *function) map[string]bool {
	m := map[string]bool{}
	var walk func(s *scope)
	walk = func(s *scope) {
		for _, st := range s.stmts {
			if st.line != "0" {
				m[st.file+":"+st.line] = true
			}
		}
		for _, k := range s.kids {
			if k.kind != 'I' {
				walk(k)
			}
		}
	}
	for _, p := range f.procs {
		walk(p.body)
	}
	return m
}

// lineOwners maps each source line of the functions' own code to the
// functions holding it.
func lineOwners(fs []*function) map[string][]*function {
	m := map[string][]*function{}
	for _, f := range fs {
		for l := range ownLines(f) {
			m[l] = append(m[l], f)
		}
	}
	return m
}

// foldedInto is the function of the other side, in the module of the same
// rank, whose own code holds most of f's own lines, at least half of
// them, when it is another function:
// the one identical code folding kept (gcc's -fipa-icf, the linker's
// --icf), whose symbol f's name became an alias of.
func foldedInto(f *function, owners map[string][]*function) string {
	lines := ownLines(f)
	count := map[*function]int{}
	var best *function
	for l := range lines {
		for _, g := range owners[l] {
			if g.procs[0].module != f.procs[0].module {
				continue
			}
			count[g]++
			if best == nil || count[g] > count[best] || count[g] == count[best] && g.key < best.key {
				best = g
			}
		}
	}
	if best == nil || best.base == f.base || 2*count[best] < len(lines) {
		return ""
	}
	return best.base
}
