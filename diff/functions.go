package diff

import (
	"slices"
	"strconv"
	"strings"
)

// Procedures are compared by the source function they were made from,
// not by symbol: the clones and outlined parts of f belong to f
// (names.go), and a function out of line in one build and only inlined
// in the other is said to be so.

// function is one source function on one side: every procedure of its
// code, grouped by copy.
type function struct {
	key      string // base link name and file (procKey's file rule)
	base     string // the link name without clone suffixes
	callee   string // what an inlined copy of it is called, with its file
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
				f = &function{key: k, base: c.base, file: p.file,
					callee: prettyBase(p.node.Value("n")) + "\x00" + fileKey(p.file)}
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

// inlinedCopies maps what an inlined call is called (callee name and
// file, as function.callee) to the functions whose procedures hold one,
// by base name.
func inlinedCopies(ps []*proc) map[string][]string {
	sets := map[string]map[string]bool{}
	for _, p := range ps {
		caller := parseClone(p.name).base
		var walk func(s *scope)
		walk = func(s *scope) {
			for _, k := range s.kids {
				if k.kind == 'I' {
					if sets[k.callee] == nil {
						sets[k.callee] = map[string]bool{}
					}
					sets[k.callee][caller] = true
				}
				walk(k)
			}
		}
		walk(p.body)
	}
	out := make(map[string][]string, len(sets))
	for k, set := range sets {
		var callers []string
		for c := range set {
			callers = append(callers, c)
		}
		slices.Sort(callers)
		out[k] = callers
	}
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
