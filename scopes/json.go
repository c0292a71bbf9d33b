package scopes

import (
	"encoding/json"
	"io"
)

// The JSON form is the same tree as the XML. Schema (version 1):
//
//	{"version":1,"modules":[{"path":..,"name":..,"files":[{"name":..,"procs":[scope..]}]}]}
//	scope: {"kind":"P|A|L|S","name"?,"link_name"?,"file"?,"line","lines"?:[lo,hi],
//	        "entry"?:"0x..","ranges"?:[["0x..","0x.."]],"inline"?:"call|callee|guard|alien","children"?:[..]}
//
// "lines" is the inclusive range of source lines of the statements under a
// scope (P, A, L), so viewers need not recompute it.
type jsonScope struct {
	Kind     string       `json:"kind"`
	Name     string       `json:"name,omitempty"`
	LinkName string       `json:"link_name,omitempty"`
	File     string       `json:"file,omitempty"`
	Line     int          `json:"line"`
	Lines    *[2]int      `json:"lines,omitempty"`
	Entry    string       `json:"entry,omitempty"`
	Ranges   [][2]string  `json:"ranges,omitempty"`
	Inline   string       `json:"inline,omitempty"`
	Children []*jsonScope `json:"children,omitempty"`
}

type jsonFile struct {
	Name  string       `json:"name"`
	Procs []*jsonScope `json:"procs"`
}

type jsonModule struct {
	Path  string      `json:"path"`
	Name  string      `json:"name"`
	Files []*jsonFile `json:"files"`
}

type jsonDoc struct {
	Version int           `json:"version"`
	Modules []*jsonModule `json:"modules"`
}

// WriteJSON writes the modules in bloop's JSON schema.
func WriteJSON(w io.Writer, mods []*Module) error {
	doc := jsonDoc{Version: 1}
	for _, m := range mods {
		jm := &jsonModule{Path: m.Path, Name: m.Name}
		for _, f := range m.Files {
			jf := &jsonFile{Name: f.Name}
			for _, p := range f.Procs {
				jf.Procs = append(jf.Procs, toJSON(p))
			}
			jm.Files = append(jm.Files, jf)
		}
		doc.Modules = append(doc.Modules, jm)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(doc)
}

func hex(a uint64) string { return appendString(a) }

func appendString(a uint64) string { return string(appendAddr(nil, a)) }

func toJSON(s *Scope) *jsonScope {
	j := &jsonScope{Name: s.Name, LinkName: s.LinkName, Line: s.Line}
	switch s.Kind {
	case Proc:
		j.Kind, j.Entry = "P", hex(s.Entry)
	case Alien:
		j.Kind, j.File = "A", s.File
		switch {
		case s.guard:
			j.Inline = "guard"
		case s.callee:
			j.Inline = "callee"
		case s.alien:
			j.Inline = "alien"
		default:
			j.Inline = "call"
		}
	case Loop:
		j.Kind, j.File, j.Entry = "L", s.File, hex(s.Entry)
	case Stmt:
		j.Kind = "S"
		for _, r := range s.Ranges {
			j.Ranges = append(j.Ranges, [2]string{hex(r.Lo), hex(r.Hi)})
		}
	}
	if s.Kind != Stmt {
		lo, hi := 0, 0
		Walk(s, func(x *Scope) {
			if x.Kind == Stmt && x.Line > 0 {
				if lo == 0 || x.Line < lo {
					lo = x.Line
				}
				if x.Line > hi {
					hi = x.Line
				}
			}
		})
		if hi > 0 {
			j.Lines = &[2]int{lo, hi}
		}
	}
	for _, c := range s.Children {
		j.Children = append(j.Children, toJSON(c))
	}
	return j
}
