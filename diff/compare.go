package diff

import (
	"errors"
	"fmt"
	"strings"

	"bloop/structure"
)

// Difference is one way two canonical documents differ.
type Difference struct {
	Path string // e.g. LM/F[x.c]/P[main]/L[l=12]; "" for the document itself
	Kind string // "attr", "missing" (only in a), "extra" (only in b), "no-range", "more"
	Attr string // attribute name for Kind "attr"
	A, B string // the attribute values, or the element's start tag
}

// Difference kinds.
const (
	DiffAttr    = "attr"
	DiffMissing = "missing"
	DiffExtra   = "extra"
	DiffNoRange = "no-range"
	DiffMore    = "more"
)

func (d Difference) String() string {
	switch d.Kind {
	case DiffAttr:
		return fmt.Sprintf("%s: attribute %s: %s vs %s", d.Path, d.Attr, quoteOrAbsent(d.A), quoteOrAbsent(d.B))
	case DiffMissing:
		return fmt.Sprintf("%s: missing in b: %s", d.Path, d.A)
	case DiffExtra:
		return fmt.Sprintf("%s: extra in b: %s", d.Path, d.B)
	case DiffNoRange:
		side := "a"
		if d.B != "" {
			side = "b"
		}
		return fmt.Sprintf("%s: element has no address range (in %s)", d.Path, side)
	}
	return d.A
}

func quoteOrAbsent(s string) string {
	if s == absent {
		return s
	}
	return fmt.Sprintf("%q", s)
}

// absent marks an attribute that one side does not have.
const absent = "(absent)"

// DefaultLimit is how many differences Equal returns before summarizing.
const DefaultLimit = 50

// Comparison is the result of Compare.
type Comparison struct {
	Total int          // number of differences found
	Diffs []Difference // the first Limit of them, document order
	Limit int
}

func (c *Comparison) add(d Difference) {
	c.Total++
	if len(c.Diffs) < c.Limit {
		c.Diffs = append(c.Diffs, d)
	}
}

// Compare canonicalizes a and b and lists their differences, keeping at
// most limit of them (limit <= 0 means DefaultLimit). Elements are paired
// by label (tag plus identifying attributes, k-th with k-th), so one
// changed value is reported as such instead of shifting every sibling.
// Pairing never hides a difference: if every pair is equal, the canonical
// child lists are identical, since their order derives from compared
// attributes.
func Compare(a, b *structure.Doc, limit int) *Comparison {
	if limit <= 0 {
		limit = DefaultLimit
	}
	c := &Comparison{Limit: limit}
	ca, errA := structure.Canonicalize(a)
	cb, errB := structure.Canonicalize(b)
	var re *structure.RangelessError
	if errors.As(errA, &re) {
		for _, p := range re.Paths {
			c.add(Difference{Path: p, Kind: DiffNoRange, A: "a"})
		}
	}
	if errors.As(errB, &re) {
		for _, p := range re.Paths {
			c.add(Difference{Path: p, Kind: DiffNoRange, B: "b"})
		}
	}
	c.node(ca.Root, cb.Root, "")
	return c
}

// Equal reports whether a and b are equal under HPCToolkit's canonical
// comparison. When there are more than DefaultLimit differences the last
// element, of Kind "more", gives the total.
func Equal(a, b *structure.Doc) (bool, []Difference) {
	c := Compare(a, b, DefaultLimit)
	ds := c.Diffs
	if c.Total > len(ds) {
		ds = append(ds, Difference{Kind: DiffMore,
			A: fmt.Sprintf("... %d more differences (%d in total)", c.Total-len(ds), c.Total)})
	}
	return c.Total == 0, ds
}

func (c *Comparison) node(a, b *structure.Node, path string) {
	if a.Tag != b.Tag {
		c.add(Difference{Path: path, Kind: DiffAttr, Attr: "(tag)", A: a.Tag, B: b.Tag})
		return
	}
	// Attributes are sorted by name in canonical form: merge.
	i, j := 0, 0
	for i < len(a.Attrs) || j < len(b.Attrs) {
		switch {
		case j == len(b.Attrs) || (i < len(a.Attrs) && a.Attrs[i].Key < b.Attrs[j].Key):
			c.add(Difference{Path: path, Kind: DiffAttr, Attr: a.Attrs[i].Key, A: a.Attrs[i].Val, B: absent})
			i++
		case i == len(a.Attrs) || b.Attrs[j].Key < a.Attrs[i].Key:
			c.add(Difference{Path: path, Kind: DiffAttr, Attr: b.Attrs[j].Key, A: absent, B: b.Attrs[j].Val})
			j++
		default:
			if a.Attrs[i].Val != b.Attrs[j].Val {
				c.add(Difference{Path: path, Kind: DiffAttr, Attr: a.Attrs[i].Key, A: a.Attrs[i].Val, B: b.Attrs[j].Val})
			}
			i++
			j++
		}
	}
	la, lb := structure.ChildLabels(a.Children), structure.ChildLabels(b.Children)
	inB := make(map[string]int, len(lb))
	for k, l := range lb {
		inB[l] = k
	}
	used := make([]bool, len(lb))
	for k, l := range la {
		p := joinPath(path, l)
		if m, ok := inB[l]; ok {
			used[m] = true
			c.node(a.Children[k], b.Children[m], p)
		} else {
			c.add(Difference{Path: p, Kind: DiffMissing, A: structure.StartTag(a.Children[k])})
		}
	}
	for m, l := range lb {
		if !used[m] {
			c.add(Difference{Path: joinPath(path, l), Kind: DiffExtra, B: structure.StartTag(b.Children[m])})
		}
	}
}

// String lists the differences one per line.
func (c *Comparison) String() string {
	var b strings.Builder
	for _, d := range c.Diffs {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	if c.Total > len(c.Diffs) {
		fmt.Fprintf(&b, "... %d more differences (%d in total)\n", c.Total-len(c.Diffs), c.Total)
	}
	return b.String()
}
