package structure

import (
	"bytes"
	"fmt"
	"io"
	"slices"
)

// maxPiece bounds every single piece of a structure file: an XML attribute
// value, run of text, tag outside its values, comment, CDATA section or
// processing instruction; a JSON string or the text between two strings.
// encoding/xml, encoding/json and etree each copy a whole value before
// anything can look at it, so a 200 MB attribute cost seconds and
// gigabytes before it was reported; readStructure stops 1 MiB into it
// instead. The largest value in the real files (shared/hpcstruct-real,
// -refs, -refs-arch, hpctoolkit-tests, hpcrun-meas and the corpus goldens)
// is an S v of 2,304 bytes, the largest name 1,760 bytes: 1 MiB is over
// 400 times that. Files are not capped: hundreds of MB are legitimate.
const maxPiece = 1 << 20

// readStructure reads a whole structure file from r, checking each piece
// against maxPiece as it arrives, and fails as soon as one is too long or
// the first non-blank byte shows the input is neither XML nor JSON.
func readStructure(r io.Reader, name string) ([]byte, *ParseError) {
	g := &guard{name: name}
	data := make([]byte, 0, 512) // as io.ReadAll: small inputs are common
	for {
		if len(data) == cap(data) {
			// Double: append's growth of 1.25 copied a large file many
			// times over (a fifth of the parse time).
			data = slices.Grow(data, len(data))
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if perr := g.feed(data); perr != nil {
			return nil, perr
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, &ParseError{File: name, Msg: "read: " + err.Error()}
		}
	}
}

// guard is readStructure's incremental tokenizer: just enough of XML and
// JSON to tell where each piece starts and ends, however the input is cut
// into reads. It sees all the data read so far and keeps only offsets;
// lines and names for a message are found in the data when one is needed.
type guard struct {
	name  string
	kind  byte // 0 until the first non-blank byte, then '<' or '{'
	state gstate
	pos   int  // next byte to look at
	start int  // the current piece's first byte
	quote byte // XML: the quote that ends the current value

	tagStart int // XML: the '<' of the current tag
	tagLen   int // XML: its length outside values before the current piece
}

type gstate int

const (
	gText    gstate = iota // XML character data; JSON outside strings
	gTag                   // in a tag or declaration, outside values
	gValue                 // in a quoted attribute value
	gComment               // in <!-- -->
	gCDATA                 // in <![ ]]>
	gPI                    // in <? ?>
	gString                // in a JSON string
)

// feed looks at data[g.pos:], data being everything read so far.
func (g *guard) feed(data []byte) *ParseError {
	if g.kind == 0 {
		i := g.pos
		for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
			i++
		}
		g.pos, g.start = i, i
		if i == len(data) {
			return nil
		}
		if data[i] != '<' && data[i] != '{' {
			return &ParseError{File: g.name, Line: lineOf(data, i),
				Msg: "not a structure file: starts with neither '<' (hpcstruct XML) nor '{' (bloop JSON)"}
		}
		g.kind = data[i]
	}
	if g.kind == '<' {
		return g.feedXML(data)
	}
	return g.feedJSON(data)
}

// endOf is what ends a comment, CDATA section or processing instruction;
// nil for other states.
func endOf(s gstate) []byte {
	switch s {
	case gComment:
		return []byte("-->")
	case gCDATA:
		return []byte("]]>")
	case gPI:
		return []byte("?>")
	}
	return nil
}

func (g *guard) feedXML(data []byte) *ParseError {
	for {
		var i int
		switch g.state {
		case gText:
			i = bytes.IndexByte(data[g.pos:], '<')
		case gTag:
			// '<' inside a tag only occurs in a DOCTYPE's internal subset:
			// markup of its own, comments included.
			i = bytes.IndexAny(data[g.pos:], `"'<>`)
		case gValue:
			i = bytes.IndexByte(data[g.pos:], g.quote)
		default:
			i = bytes.Index(data[g.pos:], endOf(g.state))
		}
		if i < 0 {
			// The piece goes on past what is read: look again from where
			// its end could still start.
			g.pos = len(data)
			if end := endOf(g.state); end != nil {
				g.pos = max(g.start, len(data)-len(end)+1)
			}
			return g.check(data, len(data))
		}
		end := g.pos + i
		if err := g.check(data, end); err != nil {
			return err
		}
		switch c := data[end]; {
		case g.state == gValue:
			g.state, g.pos, g.start = gTag, end+1, end+1
		case g.state == gTag && (c == '"' || c == '\''):
			g.tagLen += end - g.start
			g.state, g.quote, g.pos, g.start = gValue, c, end+1, end+1
		case g.state == gTag && c == '>':
			g.state, g.pos, g.start = gText, end+1, end+1
		case c == '<': // from gText or gTag
			rest := data[end:]
			if len(rest) < len("<!--") {
				g.pos = end // not enough to tell what it opens; wait for more
				return nil
			}
			switch {
			case bytes.HasPrefix(rest, []byte("<!--")):
				g.state, g.pos, g.start = gComment, end+4, end+4
			case bytes.HasPrefix(rest, []byte("<![")):
				g.state, g.pos, g.start = gCDATA, end+3, end+3
			case bytes.HasPrefix(rest, []byte("<?")):
				g.state, g.pos, g.start = gPI, end+2, end+2
			default:
				g.state, g.pos, g.start = gTag, end+1, end
				g.tagStart, g.tagLen = end, 0
			}
		default: // the end of a comment, CDATA section or processing instruction
			n := len(endOf(g.state))
			g.state, g.pos, g.start = gText, end+n, end+n
		}
	}
}

func (g *guard) feedJSON(data []byte) *ParseError {
	for {
		var i int
		if g.state == gString {
			i = bytes.IndexAny(data[g.pos:], `"\`)
		} else {
			i = bytes.IndexByte(data[g.pos:], '"')
		}
		if i < 0 {
			g.pos = len(data)
			return g.check(data, len(data))
		}
		end := g.pos + i
		if data[end] == '\\' {
			// Skip the escaped byte, once it is read.
			if end+2 > len(data) {
				g.pos = end
				return g.check(data, len(data))
			}
			g.pos = end + 2
			continue
		}
		if err := g.check(data, end); err != nil {
			return err
		}
		if g.state == gString {
			g.state = gText
		} else {
			g.state = gString
		}
		g.pos, g.start = end+1, end+1
	}
}

// check fails when the current piece, which goes on at least to end, is
// longer than maxPiece.
func (g *guard) check(data []byte, end int) *ParseError {
	n := end - g.start
	if g.state == gTag {
		n += g.tagLen
	}
	if n <= maxPiece {
		return nil
	}
	start, what := g.start, ""
	switch g.state {
	case gText:
		what = "text"
		if g.kind == '{' {
			what = "JSON text between strings"
		}
	case gTag:
		start, what = g.tagStart, "tag <"+g.tagName(data)+">"
	case gValue:
		// The attribute's name is before the '=' before the quote.
		j := g.start - 2
		for j > g.tagStart && (isSpace(data[j]) || data[j] == '=') {
			j--
		}
		k := j
		for k > g.tagStart && !isSpace(data[k]) {
			k--
		}
		start, what = g.tagStart, fmt.Sprintf("<%s> attribute %s", g.tagName(data), prefix(string(data[k+1:j+1]), 32))
	case gComment:
		what = "comment"
	case gCDATA:
		what = "CDATA section"
	case gPI:
		what = "processing instruction"
	case gString:
		what = "JSON string"
	}
	head := data[g.start:min(g.start+excerptLen, len(data))]
	return &ParseError{File: g.name, Line: lineOf(data, start),
		Msg: fmt.Sprintf("%s longer than %d bytes, the limit for one piece: %q...", what, maxPiece, head)}
}

// tagName is the current tag's name, as much of it as suits a message.
func (g *guard) tagName(data []byte) string {
	end := g.tagStart + 1
	for end < len(data) && end < g.tagStart+33 && !isSpace(data[end]) && data[end] != '/' && data[end] != '>' {
		end++
	}
	return string(data[g.tagStart+1 : end])
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func lineOf(data []byte, off int) int { return 1 + bytes.Count(data[:off], []byte("\n")) }
