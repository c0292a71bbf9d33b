package structure

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
)

// The JSON form is the same tree as the XML. Schema (version 1):
//
//	{"version":1,"modules":[{"path":..,"name":..,"has_calls"?:true,"files":[{"name":..,"procs":[scope..]}]}]}
//	scope: {"kind":"P|A|L|S|C","name"?,"link_name"?,"file"?,"line","lines"?:[lo,hi],
//	        "entry"?:"0x..","ranges"?:[["0x..","0x.."]],"inline"?:"call|callee|guard|alien",
//	        "target"?:"0x..","device"?:..,"children"?:[..]}
//
// A C scope is a call site of GPU code analysed with a CFG (XML C, in a
// module with has_calls): one call instruction, its callee's address and
// the device.
//
// "lines" is the inclusive range of source lines of the statements under a
// scope (P, A, L) that are in the scope's own file (a P's is its file's
// name; an A's or L's is its "file"), so viewers need not recompute it.
// Lines of other files (an inlined header function inside main) are left
// out: a range mixing two files' line numbers means nothing.
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
	Target   string       `json:"target,omitempty"`
	Device   string       `json:"device,omitempty"`
	Children []*jsonScope `json:"children,omitempty"`
}

// JSONWriter streams the JSON form: each procedure is marshalled on its
// own into a document skeleton written by hand, with the indentation
// encoding/json gives the whole document (one space a level), so no tree
// of the whole image is held. Procedures must arrive grouped by file.
type JSONWriter struct {
	// HasCalls, set before a module begins, marks its call sites analysed
	// (Module.HasCalls): the module's "has_calls".
	HasCalls bool

	w       *bufio.Writer
	err     error
	modules int    // modules begun
	files   int    // files begun in the current module
	inFile  bool   // a file's procs array is open
	file    string // its name
}

// NewJSONWriter starts a JSON document on w.
func NewJSONWriter(w io.Writer) *JSONWriter {
	j := &JSONWriter{w: bufio.NewWriterSize(w, 1<<16)}
	j.w.WriteString("{\n \"version\": 1,\n \"modules\": ")
	return j
}

// marshal writes v as encoding/json does at the given depth.
func (j *JSONWriter) marshal(v any, depth int) {
	b, err := json.MarshalIndent(v, strings.Repeat(" ", depth), " ")
	if err != nil && j.err == nil {
		j.err = err
	}
	j.w.Write(b)
}

// EscapeJSON is s as the JSON writer spells a string, without the
// quotes around it.
func EscapeJSON(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b[1 : len(b)-1])
}

// item starts the next element of an array at depth: the array's opening
// bracket before the first, a comma before the others.
func (j *JSONWriter) item(first bool, depth int) {
	if first {
		j.w.WriteString("[")
	} else {
		j.w.WriteString(",")
	}
	j.w.WriteString("\n" + strings.Repeat(" ", depth))
}

// BeginModule opens a load module.
func (j *JSONWriter) BeginModule(path, name string) {
	j.item(j.modules == 0, 2)
	j.modules++
	j.w.WriteString("{\n   \"path\": \"" + EscapeJSON(path) + "\"")
	j.w.WriteString(",\n   \"name\": ")
	j.marshal(name, 3)
	if j.HasCalls {
		j.w.WriteString(",\n   \"has_calls\": true")
	}
	j.w.WriteString(",\n   \"files\": ")
	j.files, j.inFile = 0, false
}

// Proc writes one procedure of the given file.
func (j *JSONWriter) Proc(file string, p *Scope) {
	if p == nil {
		return // a file without procedures: JSON lists none
	}
	if j.inFile && file != j.file {
		j.endFile()
	}
	first := !j.inFile
	if first {
		j.item(j.files == 0, 4)
		j.files++
		j.w.WriteString("{\n     \"name\": ")
		j.marshal(file, 5)
		j.w.WriteString(",\n     \"procs\": ")
		j.inFile, j.file = true, file
	}
	j.item(first, 6)
	j.marshal(toJSON(p, file), 6)
}

func (j *JSONWriter) endFile() {
	j.w.WriteString("\n     ]\n    }")
	j.inFile = false
}

// EndModule closes the load module.
func (j *JSONWriter) EndModule() {
	if j.inFile {
		j.endFile()
	}
	if j.files == 0 {
		j.w.WriteString("null")
	} else {
		j.w.WriteString("\n   ]")
	}
	j.w.WriteString("\n  }")
}

// Close ends the document and flushes it.
func (j *JSONWriter) Close() error {
	if j.modules == 0 {
		j.w.WriteString("null")
	} else {
		j.w.WriteString("\n ]")
	}
	j.w.WriteString("\n}\n")
	if err := j.w.Flush(); err != nil {
		return err
	}
	return j.err
}

// WriteJSON writes the modules in bloop's JSON schema.
func WriteJSON(w io.Writer, mods []*Module) error {
	j := NewJSONWriter(w)
	for _, m := range mods {
		j.HasCalls = m.HasCalls
		j.BeginModule(m.Path, m.Name)
		for _, f := range m.Files {
			for _, p := range f.Procs {
				j.Proc(f.Name, p)
			}
		}
		j.EndModule()
	}
	return j.Close()
}

// hex is an address as both forms spell it: "0" or "0x" and lower-case hex.
func hex(a uint64) string { return string(appendAddr(nil, a)) }

// inlineNames are the JSON's "inline" values.
var inlineNames = [...]string{InlineCall: "call", InlineCallee: "callee", InlineGuard: "guard", InlineAlien: "alien"}

// toJSON converts s; file is a P's file (the others carry their own).
func toJSON(s *Scope, file string) *jsonScope {
	j := &jsonScope{Name: s.Name, LinkName: s.LinkName, Line: s.Line}
	switch s.Kind {
	case Proc:
		j.Kind, j.Entry = "P", hex(s.Entry)
	case Alien:
		j.Kind, j.File = "A", s.File
		j.Inline = inlineNames[s.Inline]
	case Loop:
		j.Kind, j.File, j.Entry = "L", s.File, hex(s.Entry)
	case Stmt:
		j.Kind = "S"
		if s.Call != nil {
			j.Kind, j.Target, j.Device = "C", hex(s.Call.Target), s.Call.Device
		}
		for _, r := range s.Ranges {
			j.Ranges = append(j.Ranges, [2]string{hex(r.Lo), hex(r.Hi)})
		}
	}
	if s.Kind != Proc {
		file = s.File
	}
	if s.Kind != Stmt {
		lo, hi := 0, 0
		Walk(s, func(x *Scope) {
			if x.Kind == Stmt && x.Line > 0 && x.File == file {
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
		j.Children = append(j.Children, toJSON(c, ""))
	}
	return j
}
