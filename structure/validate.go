package structure

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// The attribute rules of the format, shared by the XML and the JSON
// reader: each reader turns its input into elements and attributes first,
// then checks them here, and words a broken rule in its own terms.

// required lists the attributes each element must have: those the format's
// DTD marks #REQUIRED, plus l on every scope, which the spec table lists
// without brackets, every real hpcstruct and bloop file has, and the diff
// keys loops, inlined calls and statements by. v stays optional (the DTD's
// #IMPLIED), as do A's f and n, whose absence has a meaning (inherit the
// file; a call site).
var required = map[string][]string{
	RootTag: {"i", "version"},
	"LM":    {"i", "n", "has-calls"},
	"F":     {"i", "n"},
	"P":     {"i", "n", "l"},
	"A":     {"i", "l"},
	"L":     {"i", "l"},
	"S":     {"i", "l"},
	"C":     {"i", "l"},
}

// attrError is a broken attribute rule.
type attrError struct {
	key     string
	missing bool
	msg     string // what is wrong with the value; "" when missing
}

func (e *attrError) Error() string {
	if e.missing {
		return "lacks attribute " + e.key
	}
	return "attribute " + e.key + ": " + e.msg
}

// checkElement applies the attribute rules to one element with tag (a
// known one: the grammar is checked before).
func checkElement(tag string, attrs []Attr) *attrError {
	for _, key := range required[tag] {
		if !hasAttr(attrs, key) {
			return &attrError{key: key, missing: true}
		}
	}
	for _, a := range attrs {
		if msg := checkValue(tag, a.Key, a.Val); msg != "" {
			return &attrError{key: a.Key, msg: msg}
		}
	}
	return nil
}

func hasAttr(attrs []Attr, key string) bool {
	for _, a := range attrs {
		if a.Key == key {
			return true
		}
	}
	return false
}

// checkValue checks the value of one attribute; "" when it is fine.
// Attributes the format gives no number or range syntax (names, files,
// version, C's t and d) may hold any text.
func checkValue(tag, key, val string) string {
	switch key {
	case "i":
		// Ids count elements in pre-order from the root's 0.
		if tag == RootTag {
			return checkDecimal(val, 0)
		}
		return checkDecimal(val, 1)
	case "l", "s":
		// l is a source line (0: unknown); DWARF lines are unsigned 32-bit
		// in every producer. P's s is a number too in every real file.
		return checkDecimal(val, 0)
	case "has-calls":
		if val != "0" && val != "1" {
			return excerpt(val) + ": want 0 or 1"
		}
	case "v":
		if _, err := ParseRanges(val); err != nil {
			return "bad range set: " + err.Error()
		}
	}
	return ""
}

// checkDecimal accepts what hpcstruct writes for a number: decimal digits
// without sign or leading zeros (which would compare unequal as strings),
// from lo to MaxUint32.
func checkDecimal(s string, lo uint64) string {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n < lo || (len(s) > 1 && s[0] == '0') {
		return fmt.Sprintf("%s: want a decimal integer from %d to %d", excerpt(s), lo, uint64(math.MaxUint32))
	}
	return ""
}

// excerptLen bounds how much of a value a message quotes: enough to
// recognise it, never the whole of a huge one.
const excerptLen = 40

// excerpt quotes s, or its start and its length when it is long.
func excerpt(s string) string {
	if len(s) <= excerptLen {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(prefix(s, excerptLen)), len(s))
}

// clipped is s, or its start and "..." when it is long: for text that is
// not a value of the file, such as a decoder's description of one.
func clipped(s string) string {
	if len(s) <= excerptLen {
		return s
	}
	return prefix(s, excerptLen) + "..."
}

// prefix is s's first n bytes, less any rune they would split.
func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
