package structure

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
)

// bloop's JSON form of a structure file (written by JSONWriter,
// schema in json.go) is read into the Doc the equivalent XML gives:
// the same elements, attributes in the XML writer's order, and ids
// numbered as it numbers them, so Diff, Compare and Paths cannot tell the
// two apart. Fields the XML has no place for ("lines", a module's "name",
// "inline") are checked where they could contradict it, then dropped.

// jsonInDoc .. jsonInScope mirror the schema. Pointers tell absent fields
// from zero values where the XML would differ.
type jsonInDoc struct {
	Version *int           `json:"version"`
	Modules []jsonInModule `json:"modules"`
}

type jsonInModule struct {
	Path     string       `json:"path"`
	HasCalls bool         `json:"has_calls"`
	Files    []jsonInFile `json:"files"`
}

type jsonInFile struct {
	Name  string         `json:"name"`
	Procs []*jsonInScope `json:"procs"`
}

type jsonInScope struct {
	Kind     string          `json:"kind"`
	Name     string          `json:"name"`
	LinkName string          `json:"link_name"`
	File     string          `json:"file"`
	Line     json.RawMessage `json:"line"` // raw: checkElement judges the number as it judges the XML's l
	Entry    *string         `json:"entry"`
	Ranges   [][]string      `json:"ranges"` // not [2]string: that would pad or cut silently
	Inline   string          `json:"inline"`
	Target   *string         `json:"target"`
	Device   string          `json:"device"`
	Children []*jsonInScope  `json:"children"`
}

// jsonVersion is the schema version this reader understands.
const jsonVersion = 1

// xmlVersion is what bloop's XML writer puts in the root's version
// attribute; the JSON carries its own schema version instead.
const xmlVersion = "4.9"

// parseJSON parses bloop's JSON structure file.
func parseJSON(data []byte, name string) (*Doc, error) {
	var jd jsonInDoc
	if err := json.Unmarshal(data, &jd); err != nil {
		return nil, jsonError(data, name, err)
	}
	if jd.Version == nil {
		return nil, &ParseError{File: name, Msg: "not a bloop JSON structure file: no \"version\""}
	}
	if *jd.Version != jsonVersion {
		return nil, &ParseError{File: name, Msg: fmt.Sprintf("JSON version %d, want %d", *jd.Version, jsonVersion)}
	}
	b := &jsonBuilder{}
	root := &Node{Tag: RootTag, Attrs: []Attr{{"i", "0"}, {"version", xmlVersion}, {"n", ""}}}
	for i, m := range jd.Modules {
		lm, err := b.module(m, fmt.Sprintf("modules[%d]", i))
		if err != nil {
			pe := &ParseError{File: name, Msg: err.Error()}
			if at, ok := err.(*jsonAt); ok {
				path := at.where
				if at.field != "" {
					path += "." + at.field
				}
				pe.Line = jsonLine(data, path)
			}
			return nil, pe
		}
		root.Children = append(root.Children, lm)
	}
	return &Doc{Name: name, Root: root}, nil
}

// jsonError turns an encoding/json error into a ParseError with the line
// of the offending byte.
func jsonError(data []byte, name string, err error) *ParseError {
	lineAt := func(off int64) int { return lineOf(data, int(min(max(off, 0), int64(len(data))))) }
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se) && se.Offset >= int64(len(data)):
		return &ParseError{File: name, Line: lineAt(se.Offset), Msg: "truncated JSON: unexpected end of file"}
	case errors.As(err, &se):
		return &ParseError{File: name, Line: lineAt(se.Offset), Msg: "invalid JSON: " + se.Error()}
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "document"
		}
		return &ParseError{File: name, Line: lineAt(te.Offset),
			Msg: fmt.Sprintf("not a bloop JSON structure file: %s is a JSON %s, want %s", field, clipped(te.Value), jsonKind(te.Type))}
	}
	return &ParseError{File: name, Msg: "invalid JSON: " + err.Error()}
}

// jsonKind names the JSON value a Go type is decoded from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.Bool:
		return "boolean"
	}
	return "integer"
}

// jsonBuilder numbers elements as the XML writer does: the root is 0 and
// each module's elements count from 2 in document order.
type jsonBuilder struct{ id int }

// node makes an element with the next id and the given attributes.
func (b *jsonBuilder) node(tag string, attrs ...Attr) *Node {
	n := &Node{Tag: tag, Attrs: make([]Attr, 0, len(attrs)+1)}
	n.Attrs = append(n.Attrs, Attr{"i", strconv.Itoa(b.id)})
	n.Attrs = append(n.Attrs, attrs...)
	b.id++
	return n
}

func (b *jsonBuilder) module(m jsonInModule, where string) (*Node, error) {
	b.id = 2
	calls := "0"
	if m.HasCalls {
		calls = "1"
	}
	lm := b.node("LM", Attr{"n", m.Path}, Attr{"has-calls", calls}, Attr{"v", "{}"})
	for i, f := range m.Files {
		fn := b.node("F", Attr{"n", f.Name})
		for j, p := range f.Procs {
			// Depth 4 as in the XML: root, LM, F, P.
			c, err := b.scope(p, "F", fmt.Sprintf("%s.files[%d].procs[%d]", where, i, j), 4)
			if err != nil {
				return nil, err
			}
			fn.Children = append(fn.Children, c)
		}
		lm.Children = append(lm.Children, fn)
	}
	return lm, nil
}

// scope converts s, found inside an element with tag parent, at nesting
// depth depth; where names it in errors, and jsonLine finds its line.
func (b *jsonBuilder) scope(s *jsonInScope, parent, where string, depth int) (*Node, error) {
	if err := checkScope(s, parent, depth); err != nil {
		return nil, &jsonAt{where: where, err: err}
	}
	n, err := b.element(s)
	if err != nil {
		return nil, &jsonAt{where: where, err: err}
	}
	if err := checkElement(n.Tag, n.Attrs); err != nil {
		at := &jsonAt{where: where, err: errors.New(jsonWording(s.Kind, err))}
		if !err.missing {
			at.field = jsonField(s.Kind, err.key)
		}
		return nil, at
	}
	for i, c := range s.Children {
		cn, err := b.scope(c, s.Kind, fmt.Sprintf("%s.children[%d]", where, i), depth+1)
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, cn)
	}
	return n, nil
}

// checkScope applies the XML grammar (allowedChildren, maxDepth) and
// rejects fields the XML could not hold for this kind: addresses there
// would silently drop out of the comparison.
func checkScope(s *jsonInScope, parent string, depth int) error {
	switch {
	case s == nil:
		return errors.New("scope is null")
	case s.Kind != "P" && s.Kind != "A" && s.Kind != "L" && s.Kind != "S" && s.Kind != "C":
		return fmt.Errorf("kind %q, want P, A, L, S or C", s.Kind)
	case !containsWord(allowedChildren[parent], s.Kind):
		return fmt.Errorf("kind %s is not allowed inside %s", s.Kind, parent)
	case depth > maxDepth:
		return fmt.Errorf("scopes nested deeper than %d", maxDepth)
	case s.Ranges != nil && s.Kind != "S" && s.Kind != "C":
		return fmt.Errorf("%s scope with \"ranges\" (only S and C have them)", s.Kind)
	case (s.Target != nil || s.Device != "") && s.Kind != "C":
		return fmt.Errorf("%s scope with \"target\" or \"device\" (only C has them)", s.Kind)
	case s.Kind == "C" && s.Device == "":
		return fmt.Errorf("%s scope without %q", s.Kind, "device")
	case s.Entry != nil && s.Kind != "P" && s.Kind != "L":
		return fmt.Errorf("%s scope with \"entry\" (only P and L have one)", s.Kind)
	case s.Inline != "" && s.Kind != "A":
		return fmt.Errorf("%s scope with \"inline\" (only A has it)", s.Kind)
	}
	switch s.Inline {
	case "", "call", "callee", "guard", "alien":
		return nil
	}
	return fmt.Errorf("inline %q, want call, callee, guard or alien", s.Inline)
}

// element makes s's element with the attributes XMLWriter writes
// for its kind, in its order.
func (b *jsonBuilder) element(s *jsonInScope) (*Node, error) {
	// An absent line is left out, for checkElement to report.
	var l []Attr
	if len(s.Line) > 0 && string(s.Line) != "null" {
		l = []Attr{{"l", string(s.Line)}}
	}
	switch s.Kind {
	case "P":
		attrs := []Attr{{"n", s.Name}}
		if s.LinkName != "" {
			attrs = append(attrs, Attr{"ln", s.LinkName})
		}
		attrs = append(attrs, l...)
		v, err := entryAttr(s.Entry)
		if err != nil {
			return nil, err
		}
		return b.node("P", append(attrs, v...)...), nil
	case "A":
		// The call/callee/guard role is not stored: the XML tells it by
		// n ("" for a call site, "<inline>" for a guard), and so does Diff.
		return b.node("A", append(l, Attr{"f", s.File}, Attr{"n", s.Name}, Attr{"v", "{}"})...), nil
	case "L":
		v, err := entryAttr(s.Entry)
		if err != nil {
			return nil, err
		}
		return b.node("L", append(append(l, Attr{"f", s.File}), v...)...), nil
	}
	v, err := rangesAttr(s.Ranges)
	if err != nil {
		return nil, err
	}
	if s.Kind == "C" {
		// As XMLWriter writes a call site: l v t d.
		attrs := append(l, Attr{"v", v})
		if s.Target != nil {
			t, err := parseAddr(*s.Target)
			if err != nil {
				return nil, fmt.Errorf("target: %w", err)
			}
			attrs = append(attrs, Attr{"t", hex(t)})
		}
		return b.node("C", append(attrs, Attr{"d", s.Device})...), nil
	}
	return b.node("S", append(l, Attr{"v", v})...), nil
}

// entryAttr is the v of a P or L: the one byte at its entry; none when
// the JSON has no entry.
func entryAttr(entry *string) ([]Attr, error) {
	if entry == nil {
		return nil, nil
	}
	lo, err := parseAddr(*entry)
	if err != nil {
		return nil, fmt.Errorf("entry: %w", err)
	}
	if lo == ^uint64(0) {
		return nil, fmt.Errorf("entry %s: no byte after it fits in 64 bits", *entry)
	}
	return []Attr{{"v", FormatRanges([]Range{{lo, lo + 1}})}}, nil
}

// rangesAttr is the v of an S; checkElement then checks it as it checks
// the XML's v (FormatRanges is exact for parsed addresses, so order and
// emptiness are judged by the same rules).
func rangesAttr(pairs [][]string) (string, error) {
	rs := make([]Range, 0, len(pairs))
	for _, p := range pairs {
		if len(p) != 2 {
			return "", fmt.Errorf("ranges: %d addresses in a range, want 2 (lo, hi)", len(p))
		}
		lo, err := parseAddr(p[0])
		if err != nil {
			return "", fmt.Errorf("ranges: %w", err)
		}
		hi, err := parseAddr(p[1])
		if err != nil {
			return "", fmt.Errorf("ranges: %w", err)
		}
		rs = append(rs, Range{lo, hi})
	}
	return FormatRanges(rs), nil
}

// jsonWording says a broken attribute rule in the JSON's terms: the
// field the attribute came from.
func jsonWording(kind string, e *attrError) string {
	field := jsonField(kind, e.key)
	if e.missing {
		return fmt.Sprintf("%s scope without %q", kind, field)
	}
	return fmt.Sprintf("%s scope %q: %s", kind, field, e.msg)
}

// jsonField is the field of a scope of kind that gives attribute key.
func jsonField(kind, key string) string {
	if key == "v" {
		if kind == "S" || kind == "C" {
			return "ranges"
		}
		return "entry"
	}
	return map[string]string{"l": "line", "n": "name", "ln": "link_name", "f": "file", "t": "target", "d": "device"}[key]
}

// jsonAt is an error about the scope at where, a path in the document
// such as modules[0].files[1].procs[2].children[0], or about its field.
type jsonAt struct {
	where string
	field string // "" when the error is about the scope as a whole
	err   error
}

func (e *jsonAt) Error() string {
	// A path 1000 scopes deep is 12 kB: keep its two ends.
	w := e.where
	if len(w) > 120 {
		w = w[:60] + "..." + w[len(w)-60:]
	}
	return w + ": " + e.err.Error()
}

// jsonLine is the line where the value at path where starts in data (as
// jsonAt names it), or 0 when it is not found. Only errors need it, so
// the document is walked again rather than tracked while decoding.
func jsonLine(data []byte, where string) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		obj     bool
		wantKey bool
		key     string
		idx     int
		path    string
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return 0
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		path := ""
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			switch {
			case top.obj && top.wantKey:
				top.key, top.wantKey = tok.(string), false
				continue
			case top.obj:
				path, top.wantKey = top.key, true
				if top.path != "" {
					path = top.path + "." + top.key
				}
			default:
				path = fmt.Sprintf("%s[%d]", top.path, top.idx)
				top.idx++
			}
		}
		if path == where {
			// The offset is just past the token, whose last byte is on
			// its first line: JSON tokens hold no raw newline.
			return lineOf(data, int(dec.InputOffset()-1))
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, &frame{obj: d == '{', wantKey: d == '{', path: path})
		}
	}
}
