package view

import "strconv"

// The columnar scope tree (STree) the structure page and the diff page
// embed, and what both build it with.

// strTable interns a page's strings: each once, index 0 is "".
type strTable struct {
	list []string
	idx  map[string]int
}

func newStrTable() *strTable {
	return &strTable{list: []string{""}, idx: map[string]int{"": 0}}
}

func (s *strTable) str(v string) int {
	if i, ok := s.idx[v]; ok {
		return i
	}
	i := len(s.list)
	s.list = append(s.list, v)
	s.idx[v] = i
	return i
}

// strs interns vs; nil for none.
func (s *strTable) strs(vs []string) []int {
	if len(vs) == 0 {
		return nil
	}
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = s.str(v)
	}
	return out
}

// newSTree returns an empty tree whose columns encode as [] rather than
// null.
func newSTree() STree {
	return STree{Kind: []int{}, Name: []int{}, File: []int{}, Line: []int{}, Kids: []int{}, Addr: []string{}, Size: []int{}, Calls: []int{}}
}

// streeBuilder appends nodes to a tree in preorder, with its strings in a
// table that may be shared with another tree.
type streeBuilder struct {
	t *STree
	s *strTable
}

// hexAddr is an address as the pages show it. A string, not a number: a
// JSON number is a JavaScript double, exact only below 2^53, and a
// kernel's addresses (0xffffffff81000000) are above.
func hexAddr(a uint64) string {
	return "0x" + strconv.FormatUint(a, 16)
}

// node appends a node and returns its index. Procedures, loops and
// statements have an address (0 included); other kinds have "".
func (b *streeBuilder) node(kind int, name, file string, line int, addr uint64, size int) int {
	t := b.t
	i := len(t.Kind)
	a := ""
	switch kind {
	case SProc, SLoop, SStmt:
		a = hexAddr(addr)
	}
	t.Kind = append(t.Kind, kind)
	t.Name = append(t.Name, b.s.str(name))
	t.File = append(t.File, b.s.str(file))
	t.Line = append(t.Line, line)
	t.Kids = append(t.Kids, 0)
	t.Addr = append(t.Addr, a)
	t.Size = append(t.Size, size)
	return i
}

// call records that node is an inlined call made at file:line.
func (b *streeBuilder) call(node int, file string, line int) {
	b.t.Calls = append(b.t.Calls, node, b.s.str(file), line)
}
