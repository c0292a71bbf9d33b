package structure

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// BaseName drops the directory part of a file name. Bracketed pseudo
// names ("[libfoo.so]", "<unknown>") are kept whole: they are not paths.
func BaseName(s string) string {
	if len(s) >= 2 && ((s[0] == '[' && s[len(s)-1] == ']') || (s[0] == '<' && s[len(s)-1] == '>')) {
		return s
	}
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// canonAttr reports whether attribute key of tag takes part in the
// comparison, and its canonical value.
func canonAttr(tag, key, val string) (string, bool) {
	switch {
	case key == "i":
		return "", false // ids are renumbered freely
	case tag == "P" && key == "s":
		return "", false
	case tag == "LM" && key == "n":
		return "", false // the binary's path differs between machines
	case tag == "F" && key == "n", tag == "A" && key == "f", tag == "L" && key == "f":
		return BaseName(val), true
	}
	return val, true
}

// RangelessError lists elements that cover no address at all; HPCToolkit's
// comparison rejects them because they cannot be ordered.
type RangelessError struct {
	File  string
	Paths []string // canonical paths, document order
}

func (e *RangelessError) Error() string {
	return fmt.Sprintf("%s: %d element(s) without any address range, first %s", e.File, len(e.Paths), e.Paths[0])
}

// Canonicalize returns a canonical copy of d: ids, P s and LM n dropped,
// directory parts of F n / A f / L f removed, attributes sorted by name,
// and the children of every node sorted by the lowest address they cover
// (own v and all descendants'), ties broken by canonical text. The copy is
// always returned; the error, a *RangelessError, lists F/P/A/L/S/C
// elements that cover no address (they sort after all others).
func Canonicalize(d *Doc) (*Doc, error) {
	c := &canonizer{text: map[*Node]string{}}
	root, _, _ := c.node(d.Root)
	out := &Doc{Name: d.Name, Root: root}
	var bad []string
	collectRangeless(root, "", &bad)
	if len(bad) > 0 {
		return out, &RangelessError{File: d.Name, Paths: bad}
	}
	return out, nil
}

type canonizer struct {
	text map[*Node]string // memoized canonical text, only built on ties
}

type keyed struct {
	n   *Node
	lo  uint64
	has bool
}

// node builds the canonical copy of n and returns the lowest address it covers.
func (c *canonizer) node(n *Node) (*Node, uint64, bool) {
	out := &Node{Tag: n.Tag, Line: n.Line, orig: n.Original()}
	var lo uint64
	has := false
	for _, a := range n.Attrs {
		val, keep := canonAttr(n.Tag, a.Key, a.Val)
		if !keep {
			continue
		}
		out.Attrs = append(out.Attrs, Attr{a.Key, val})
		if a.Key == "v" {
			if rs, err := ParseRanges(a.Val); err == nil && len(rs) > 0 {
				lo, has = rs[0].Lo, true
			}
		}
	}
	slices.SortStableFunc(out.Attrs, func(a, b Attr) int { return strings.Compare(a.Key, b.Key) })
	ks := make([]keyed, len(n.Children))
	for i, ch := range n.Children {
		cn, clo, chas := c.node(ch)
		ks[i] = keyed{cn, clo, chas}
		if chas && (!has || clo < lo) {
			lo, has = clo, true
		}
	}
	slices.SortStableFunc(ks, func(x, y keyed) int {
		if x.has != y.has {
			if x.has {
				return -1
			}
			return 1
		}
		if x.lo != y.lo {
			return cmp.Compare(x.lo, y.lo)
		}
		return strings.Compare(c.canonText(x.n), c.canonText(y.n))
	})
	if len(ks) > 0 {
		out.Children = make([]*Node, len(ks))
		for i, k := range ks {
			out.Children[i] = k.n
		}
	}
	return out, lo, has
}

func (c *canonizer) canonText(n *Node) string {
	if s, ok := c.text[n]; ok {
		return s
	}
	var b strings.Builder
	b.WriteString(StartTag(n))
	for _, ch := range n.Children {
		b.WriteString(c.canonText(ch))
	}
	b.WriteString("</" + n.Tag + ">")
	s := b.String()
	c.text[n] = s
	return s
}

// StartTag renders n's start tag with its attributes in stored order.
func StartTag(n *Node) string {
	var b strings.Builder
	b.WriteString("<" + n.Tag)
	for _, a := range n.Attrs {
		fmt.Fprintf(&b, " %s=\"%s\"", a.Key, EscapeAttr(a.Val))
	}
	b.WriteString(">")
	return b.String()
}

// collectRangeless appends, in pre-order, the paths of the descendants of
// n that are scope elements covering no address, and reports whether n
// covers any address.
func collectRangeless(n *Node, prefix string, bad *[]string) bool {
	has := false
	if rs, err := ParseRanges(n.Value("v")); err == nil && len(rs) > 0 {
		has = true
	}
	labels := ChildLabels(n.Children)
	for i, c := range n.Children {
		p := joinPath(prefix, labels[i])
		at := len(*bad)
		if collectRangeless(c, p, bad) {
			has = true
		} else if containsWord("F P A L S C", c.Tag) {
			*bad = slices.Insert(*bad, at, p)
		}
	}
	return has
}

func joinPath(prefix, elem string) string {
	if prefix == "" {
		return elem
	}
	return prefix + "/" + elem
}

// Label names n among its siblings in difference paths, e.g. F[x.c],
// P[main], L[l=12], A[f=x.c l=48 n=f4_inline].
func Label(n *Node) string {
	switch n.Tag {
	case "F", "P":
		return n.Tag + "[" + n.Value("n") + "]"
	case "L", "S", "C":
		return n.Tag + "[l=" + n.Value("l") + "]"
	case "A":
		s := "A[f=" + BaseName(n.Value("f")) + " l=" + n.Value("l")
		if name := n.Value("n"); name != "" {
			s += " n=" + name
		}
		return s + "]"
	}
	return n.Tag
}

// ChildLabels returns sibling-unique labels: the k-th (k>1) child with the
// same label gets "#k" appended.
func ChildLabels(kids []*Node) []string {
	seen := map[string]int{}
	out := make([]string, len(kids))
	for i, k := range kids {
		l := Label(k)
		seen[l]++
		if c := seen[l]; c > 1 {
			l = fmt.Sprintf("%s#%d", l, c)
		}
		out[i] = l
	}
	return out
}
