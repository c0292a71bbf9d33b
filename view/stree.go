package view

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

// newSTree returns an empty tree whose columns encode as [] rather than
// null.
func newSTree() STree {
	return STree{Kind: []int{}, Name: []int{}, File: []int{}, Line: []int{}, Kids: []int{}, Addr: []int{}, Size: []int{}, Calls: []int{}}
}

// streeBuilder appends nodes to a tree in preorder, with its strings in a
// table that may be shared with another tree.
type streeBuilder struct {
	t        *STree
	s        *strTable
	prevAddr int
}

// node appends a node and returns its index. Addresses are stored as
// the difference from the previous node's; a node without one (addr 0)
// stores 0.
func (b *streeBuilder) node(kind int, name, file string, line int, addr uint64, size int) int {
	t := b.t
	i := len(t.Kind)
	a := int(addr)
	if addr == 0 {
		a = b.prevAddr
	}
	t.Kind = append(t.Kind, kind)
	t.Name = append(t.Name, b.s.str(name))
	t.File = append(t.File, b.s.str(file))
	t.Line = append(t.Line, line)
	t.Kids = append(t.Kids, 0)
	t.Addr = append(t.Addr, a-b.prevAddr)
	t.Size = append(t.Size, size)
	b.prevAddr = a
	return i
}

// call records that node is an inlined call made at file:line.
func (b *streeBuilder) call(node int, file string, line int) {
	b.t.Calls = append(b.t.Calls, node, b.s.str(file), line)
}
