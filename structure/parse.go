package structure

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/beevik/etree"
)

// Attr is one attribute, kept in file order.
type Attr struct{ Key, Val string }

// Node is one element of a structure file.
type Node struct {
	Tag      string
	Attrs    []Attr
	Children []*Node
	Line     int // 1-based line of the start tag; 0 if unknown
	// orig is the element a canonical copy was made from (Canonicalize
	// keeps only base names; a page showing the diff needs the paths).
	orig *Node
}

// Original returns the element n is a canonical copy of (Canonicalize),
// with its attributes as the file wrote them; n itself when n is not a
// copy.
func (n *Node) Original() *Node {
	if n.orig != nil {
		return n.orig
	}
	return n
}

// Doc is a parsed structure file. Name is used in messages.
type Doc struct {
	Name string
	Root *Node
}

// Get returns the value of attribute key and whether it is present.
func (n *Node) Get(key string) (string, bool) {
	for _, a := range n.Attrs {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// Value returns the value of attribute key, or "" when absent.
func (n *Node) Value(key string) string {
	v, _ := n.Get(key)
	return v
}

// Set sets attribute key, appending it when absent.
func (n *Node) Set(key, val string) {
	for i := range n.Attrs {
		if n.Attrs[i].Key == key {
			n.Attrs[i].Val = val
			return
		}
	}
	n.Attrs = append(n.Attrs, Attr{key, val})
}

// Clone returns a deep copy of n.
func (n *Node) Clone() *Node {
	c := &Node{Tag: n.Tag, Line: n.Line, Attrs: append([]Attr(nil), n.Attrs...)}
	c.Children = make([]*Node, len(n.Children))
	for i, ch := range n.Children {
		c.Children[i] = ch.Clone()
	}
	return c
}

// Clone returns a deep copy of d.
func (d *Doc) Clone() *Doc { return &Doc{Name: d.Name, Root: d.Root.Clone()} }

// ParseError is returned for unreadable or malformed structure files.
type ParseError struct {
	File string
	Line int // 0 when not tied to a line
	Msg  string
}

func (e *ParseError) Error() string {
	// Messages quote excerpts of values; clipping here also bounds what
	// they quote whole (names, JSON paths, the decoders' own messages).
	msg := e.Msg
	if len(msg) > maxMsg {
		msg = fmt.Sprintf("%s... (message of %d bytes clipped)", prefix(msg, maxMsg), len(msg))
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, msg)
	}
	return fmt.Sprintf("%s: %s", e.File, msg)
}

// maxMsg bounds a message after the file and line: room for any of ours
// with its excerpts, far below a pathological name.
const maxMsg = 300

// RootTag is the root element of a structure file.
const RootTag = "HPCToolkitStructure"

// maxDepth bounds nesting; below etree's own limit (1024) so that our
// message, not etree's, is the one users see.
const maxDepth = 1000

// maxAttrs bounds the attributes of one element: the format's have at
// most six, and both the duplicate check below and etree's take time
// quadratic in their number (a 1 MB tag of 100,000 took 25 s).
const maxAttrs = 32

// allowedChildren is the DTD's content model; "" is the document level.
var allowedChildren = map[string]string{
	"":      RootTag,
	RootTag: "LM",
	"LM":    "F P",
	"F":     "P L S",
	"P":     "P A L S C",
	"A":     "A L S C",
	"L":     "A L S C",
	"S":     "",
	"C":     "C",
}

// ParseFile reads and parses the structure file at path, XML or JSON (see Parse).
func ParseFile(path string) (*Doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads a structure file from r, hpcstruct XML or bloop's JSON,
// told apart by the first non-blank byte ('<' or '{'); both give the same
// Doc. name is used in error messages and stored in Doc.Name.
func Parse(r io.Reader, name string) (*Doc, error) {
	data, perr := readStructure(r, name)
	if perr != nil {
		return nil, perr
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, &ParseError{File: name, Msg: "empty file"}
	}
	// readStructure has checked that the first byte is one of these.
	if trimmed[0] == '<' {
		return parseXML(data, name)
	}
	return parseJSON(data, name)
}

// parseXML parses an hpcstruct XML document.
func parseXML(data []byte, name string) (*Doc, error) {
	// The validating scan gives precise, line-numbered messages (etree only
	// says "invalid XML format") and records the line of every start tag.
	lines, perr := scan(data, name)
	if perr != nil {
		return nil, perr
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(data); err != nil {
		return nil, &ParseError{File: name, Msg: "not well-formed XML: " + err.Error()}
	}
	root := doc.Root()
	if root == nil {
		return nil, &ParseError{File: name, Msg: "no root element"}
	}
	next := 0
	var conv func(e *etree.Element) *Node
	conv = func(e *etree.Element) *Node {
		n := &Node{Tag: fullName(e.Space, e.Tag)}
		if next < len(lines) {
			n.Line = lines[next]
		}
		next++
		n.Attrs = make([]Attr, len(e.Attr))
		for i, a := range e.Attr {
			n.Attrs[i] = Attr{fullName(a.Space, a.Key), a.Value}
		}
		for _, c := range e.ChildElements() {
			n.Children = append(n.Children, conv(c))
		}
		return n
	}
	out := &Doc{Name: name, Root: conv(root)}
	if next != len(lines) {
		// Both readers tokenize with encoding/xml, so this cannot happen;
		// if it ever does, wrong line numbers are worse than none.
		clearLines(out.Root)
	}
	return out, nil
}

func clearLines(n *Node) {
	n.Line = 0
	for _, c := range n.Children {
		clearLines(c)
	}
}

func fullName(space, local string) string {
	if space != "" {
		return space + ":" + local
	}
	return local
}

// scan checks well-formedness and the structure-file grammar and returns
// the line of each start tag in document order.
func scan(data []byte, name string) ([]int, *ParseError) {
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	type open struct {
		tag  string
		line int
	}
	var stack []open
	var lines []int
	var attrs []Attr // one element's, reused: checkElement keeps none
	sawRoot := false
	fail := func(line int, format string, args ...any) ([]int, *ParseError) {
		return nil, &ParseError{File: name, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	for {
		line, _ := dec.InputPos()
		tok, err := dec.RawToken()
		if err == io.EOF {
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				end, _ := dec.InputPos()
				return fail(end, "truncated XML: <%s> opened at line %d is never closed", top.tag, top.line)
			}
			if !sawRoot {
				return fail(0, "no root element (truncated file?)")
			}
			return lines, nil
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				if strings.Contains(se.Msg, "unexpected EOF") {
					return fail(se.Line, "truncated XML: unexpected end of file")
				}
				return fail(se.Line, "not well-formed XML: %s", se.Msg)
			}
			return fail(line, "not XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			tag := fullName(t.Name.Space, t.Name.Local)
			parent := ""
			if len(stack) > 0 {
				parent = stack[len(stack)-1].tag
			} else if sawRoot {
				return fail(line, "second root element <%s>", tag)
			}
			if parent == "" {
				sawRoot = true
				if tag != RootTag {
					return fail(line, "root element is <%s>, not <%s>", tag, RootTag)
				}
			} else if _, known := allowedChildren[tag]; !known {
				return fail(line, "unknown element <%s>", tag)
			} else if !containsWord(allowedChildren[parent], tag) {
				return fail(line, "element <%s> is not allowed inside <%s>", tag, parent)
			}
			if len(stack) >= maxDepth {
				return fail(line, "elements nested deeper than %d", maxDepth)
			}
			if len(t.Attr) > maxAttrs {
				return fail(line, "<%s> has %d attributes, more than the limit of %d", tag, len(t.Attr), maxAttrs)
			}
			attrs = attrs[:0]
			for i, a := range t.Attr {
				attrs = append(attrs, Attr{fullName(a.Name.Space, a.Name.Local), a.Value})
				for _, b := range attrs[:i] {
					if b.Key == attrs[i].Key {
						return fail(line, "<%s> has attribute %s twice", tag, b.Key)
					}
				}
			}
			if err := checkElement(tag, attrs); err != nil {
				return fail(line, "<%s> %v", tag, err)
			}
			stack = append(stack, open{tag, line})
			lines = append(lines, line)
		case xml.EndElement:
			tag := fullName(t.Name.Space, t.Name.Local)
			if len(stack) == 0 {
				return fail(line, "unexpected end tag </%s>", tag)
			}
			top := stack[len(stack)-1]
			if top.tag != tag {
				return fail(line, "end tag </%s> does not match <%s> opened at line %d", tag, top.tag, top.line)
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(bytes.TrimSpace(t)) == 0 {
				continue
			}
			if len(stack) == 0 {
				return fail(line, "not a structure file: text outside the root element")
			}
			return fail(line, "unexpected text inside <%s>", stack[len(stack)-1].tag)
		}
	}
}

func containsWord(list, w string) bool {
	for _, x := range strings.Fields(list) {
		if x == w {
			return true
		}
	}
	return false
}
