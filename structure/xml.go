package structure

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// dtd is bloop's statement of the structure-file grammar (format 4.9).
const dtd = `<!DOCTYPE HPCToolkitStructure [
<!-- HPCToolkit structure file, format version 4.9, as written by bloop -->
<!ELEMENT HPCToolkitStructure (LM)*>
<!ATTLIST HPCToolkitStructure
        version CDATA #REQUIRED
        i       CDATA #REQUIRED
        n       CDATA #IMPLIED>
  <!-- LM: load module; F: file; P: procedure; A: alien (inlined or foreign code);
       L: loop; S: statement; C: call site.
       i: id; n: name; ln: link name; l: line; f: file;
       v: address ranges "{[lo-hi) ...}"; t: call target; d: device -->
  <!ELEMENT LM (F|P)*>
  <!ATTLIST LM
        i CDATA #REQUIRED
        n CDATA #REQUIRED
        has-calls CDATA #REQUIRED
        v CDATA #IMPLIED>
  <!ELEMENT F (P|L|S)*>
  <!ATTLIST F
        i CDATA #REQUIRED
        n CDATA #REQUIRED>
  <!ELEMENT P (P|A|L|S|C)*>
  <!ATTLIST P
        i  CDATA #REQUIRED
        n  CDATA #REQUIRED
        ln CDATA #IMPLIED
        l  CDATA #IMPLIED
        s  CDATA #IMPLIED
        v  CDATA #IMPLIED>
  <!ELEMENT A (A|L|S|C)*>
  <!ATTLIST A
        i CDATA #REQUIRED
        f CDATA #IMPLIED
        n CDATA #IMPLIED
        ln CDATA #IMPLIED
        l CDATA #IMPLIED
        v CDATA #IMPLIED>
  <!ELEMENT L (A|L|S|C)*>
  <!ATTLIST L
        i CDATA #REQUIRED
        l CDATA #REQUIRED
        f CDATA #IMPLIED
        v CDATA #IMPLIED>
  <!ELEMENT S EMPTY>
  <!ATTLIST S
        i CDATA #REQUIRED
        l CDATA #REQUIRED
        v CDATA #IMPLIED>
  <!ELEMENT C (C)*>
  <!ATTLIST C
        i CDATA #REQUIRED
        l CDATA #REQUIRED
        v CDATA #IMPLIED
        t CDATA #IMPLIED
        d CDATA #IMPLIED>
]>
`

// XMLWriter streams a structure file: procedures are written as they
// arrive, so no tree of the whole image is held. Procedures must arrive
// grouped by file, in output order.
type XMLWriter struct {
	// HasCalls, set before a module begins, marks its call sites analysed
	// (Module.HasCalls).
	HasCalls bool

	w      *bufio.Writer
	id     int
	pretty bool
	depth  int
	num    []byte
	file   string // the open F element's file
	inFile bool
}

var escaper = strings.NewReplacer("<", "&lt;", ">", "&gt;", "&", "&amp;", `"`, "&quot;")

// NewXMLWriter starts an hpcstruct document on w.
func NewXMLWriter(w io.Writer, pretty bool) *XMLWriter {
	x := &XMLWriter{w: bufio.NewWriterSize(w, 1<<16), pretty: pretty}
	x.w.WriteString("<?xml version=\"1.0\"?>\n")
	x.w.WriteString(dtd)
	x.w.WriteString("<HPCToolkitStructure i=\"0\" version=\"4.9\" n=\"\">\n")
	return x
}

// BeginModule opens a load module; path is its file (name is for JSON).
func (x *XMLWriter) BeginModule(path, name string) {
	x.id = 2
	x.depth = 0
	x.open("LM")
	x.attr("n", path)
	calls := "0"
	if x.HasCalls {
		calls = "1"
	}
	x.w.WriteString(` has-calls="` + calls + `" v="{}">` + "\n")
	x.depth++
}

// Proc writes one procedure of the given file; p nil writes the file
// without it (hpcstruct lists some files empty).
func (x *XMLWriter) Proc(file string, p *Scope) {
	if x.inFile && file != x.file {
		x.endFile()
	}
	if !x.inFile {
		x.open("F")
		x.attr("n", file)
		x.w.WriteString(">\n")
		x.depth++
		x.file, x.inFile = file, true
	}
	if p != nil { // nil: the file has no procedure
		x.scope(p)
	}
}

func (x *XMLWriter) endFile() {
	x.depth--
	x.close("F")
	x.inFile = false
}

// EndModule closes the load module.
func (x *XMLWriter) EndModule() {
	if x.inFile {
		x.endFile()
	}
	x.depth--
	x.close("LM")
}

// Close ends the document and flushes it.
func (x *XMLWriter) Close() error {
	x.w.WriteString("</HPCToolkitStructure>\n")
	return x.w.Flush()
}

// WriteXML writes the modules as one hpcstruct document.
func WriteXML(w io.Writer, mods []*Module, pretty bool) error {
	x := NewXMLWriter(w, pretty)
	for _, m := range mods {
		x.HasCalls = m.HasCalls
		x.BeginModule(m.Path, m.Name)
		for _, f := range m.Files {
			if len(f.Procs) == 0 {
				x.Proc(f.Name, nil)
			}
			for _, p := range f.Procs {
				x.Proc(f.Name, p)
			}
		}
		x.EndModule()
	}
	return x.Close()
}

func (x *XMLWriter) indent() {
	if x.pretty {
		for i := 0; i < x.depth; i++ {
			x.w.WriteString("  ")
		}
	}
}

// open writes `<tag i="N"` and consumes an id.
func (x *XMLWriter) open(tag string) {
	x.indent()
	x.w.WriteByte('<')
	x.w.WriteString(tag)
	x.w.WriteString(` i="`)
	x.num = strconv.AppendInt(x.num[:0], int64(x.id), 10)
	x.w.Write(x.num)
	x.w.WriteByte('"')
	x.id++
}

func (x *XMLWriter) close(tag string) {
	x.indent()
	x.w.WriteString("</" + tag + ">\n")
}

func (x *XMLWriter) attr(k, v string) {
	x.w.WriteByte(' ')
	x.w.WriteString(k)
	x.w.WriteString(`="`)
	x.w.WriteString(EscapeAttr(v))
	x.w.WriteByte('"')
}

// EscapeAttr is v as the XML writer spells an attribute's value between
// its double quotes.
func EscapeAttr(v string) string {
	if strings.ContainsAny(v, `<>&"`) {
		v = escaper.Replace(v)
	}
	return v
}

func (x *XMLWriter) intAttr(k string, v int) {
	x.num = strconv.AppendInt(x.num[:0], int64(v), 10)
	x.rawAttr(k, x.num)
}

// rangesAttr writes v="{[lo-hi) ...}".
func (x *XMLWriter) rangesAttr(rs []Range) {
	x.num = appendRanges(x.num[:0], rs)
	x.rawAttr("v", x.num)
}

// rawAttr writes an attribute whose value needs no escaping.
func (x *XMLWriter) rawAttr(k string, v []byte) {
	x.w.WriteByte(' ')
	x.w.WriteString(k)
	x.w.WriteString(`="`)
	x.w.Write(v)
	x.w.WriteByte('"')
}

func (x *XMLWriter) scope(s *Scope) {
	switch s.Kind {
	case Proc:
		x.open("P")
		x.attr("n", s.Name)
		if s.LinkName != "" {
			x.attr("ln", s.LinkName)
		}
		x.intAttr("l", s.Line)
		x.rangesAttr([]Range{{Lo: s.Entry, Hi: s.Entry + 1}})
	case Alien:
		x.open("A")
		x.intAttr("l", s.Line)
		x.attr("f", s.File)
		x.attr("n", s.Name)
		x.attr("v", "{}")
	case Loop:
		x.open("L")
		x.intAttr("l", s.Line)
		x.attr("f", s.File)
		x.rangesAttr([]Range{{Lo: s.Entry, Hi: s.Entry + 1}})
	case Stmt:
		if s.Call != nil {
			x.open("C")
			x.intAttr("l", s.Line)
			x.rangesAttr(s.Ranges)
			x.num = appendAddr(x.num[:0], s.Call.Target)
			x.rawAttr("t", x.num)
			x.attr("d", s.Call.Device)
			x.w.WriteString("/>\n")
			return
		}
		x.open("S")
		x.intAttr("l", s.Line)
		x.rangesAttr(s.Ranges)
		x.w.WriteString("/>\n")
		return
	}
	if len(s.Children) == 0 && s.Kind != Proc {
		x.w.WriteString("/>\n")
		return
	}
	x.w.WriteString(">\n")
	x.depth++
	for _, c := range s.Children {
		x.scope(c)
	}
	x.depth--
	switch s.Kind {
	case Proc:
		x.close("P")
	case Alien:
		x.close("A")
	case Loop:
		x.close("L")
	}
}
