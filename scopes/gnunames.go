package scopes

import (
	"strings"
	"sync"

	"github.com/ianlancetaylor/demangle"
)

// Names demangles the link names of one image, each once: an inlined
// callee's name is asked for at every copy of it (libjvm: millions of
// instructions in inlined code, a few thousand distinct callees), and
// demangling dominated the analysis before it was remembered. Safe for
// concurrent use. In the hpcstruct-compatible mode it also holds the names
// GNU's demangler (c++filt, the demangler hpcstruct uses) gives: the Go
// demangler differs from it on a few templates (substitutions inside `sr`
// unresolved names). A nil *Names demangles without remembering.
type Names struct {
	gnu     map[string]string // link name -> c++filt output (with return type)
	memo    sync.Map          // link name -> demangled
	callees sync.Map          // *loader.Callee -> inline name

	// DWARFAliases makes a procedure's DWARF name compete with its
	// symbols, as Dyninst's DWARF walk does (compat mode; see dwarfAlias).
	DWARFAliases bool
	// NoMIPSCallees names inlined callees without DW_AT_MIPS_linkage_name,
	// by their DW_AT_name, as Dyninst 12.3 does (compat mode).
	NoMIPSCallees bool
}

type demangled struct {
	s  string
	ok bool
}

// NewNames returns an empty name cache; gnu, when not nil, holds c++filt's
// outputs for link names.
func NewNames(gnu map[string]string) *Names { return &Names{gnu: gnu} }

// demangle is demangleOK with GNU's spelling when it is known, remembered.
func (n *Names) demangle(name string) (string, bool) {
	if n == nil || !strings.HasPrefix(name, "_Z") {
		return n.demangleOnce(name)
	}
	if v, ok := n.memo.Load(name); ok {
		d := v.(demangled)
		return d.s, d.ok
	}
	s, ok := n.demangleOnce(name)
	n.memo.Store(name, demangled{s, ok})
	return s, ok
}

func (n *Names) demangleOnce(name string) (string, bool) {
	d, ok := demangleOK(name)
	if n == nil || n.gnu == nil || !strings.HasPrefix(name, "_Z") {
		return d, ok
	}
	if !mangledAlphabet(name) {
		// Symbol versions (name@@VERSION) and @plt: libiberty demangles
		// whole strings only, where c++filt demangles the word before.
		return name, false
	}
	g, found := n.gnu[name]
	if !found {
		return d, ok
	}
	if g == name {
		// c++filt prints what it cannot demangle unchanged; libiberty's
		// cplus_demangle, which hpcstruct calls, then gives up too.
		return name, false
	}
	if ast, err := demangle.ToAST(name, demangle.NoRust, demangle.Verbose); err == nil && dropReturnType(ast) != ast {
		// hpcstruct demangles with DMGL_RET_DROP. Where GNU's full text
		// is the Go demangler's, the Go AST knows the return type exactly;
		// else cut it from GNU's text.
		if g == gnuString(markEmptyPacks(ast)) {
			return d, true
		}
		g = cutReturnType(g)
	}
	return g, true
}

// cutReturnType removes the return type GNU prints before a template
// function's name: the text before the last space outside brackets that
// precedes the parameter list.
func cutReturnType(s string) string {
	t := maskOperators(s)
	p := paramsStart(t)
	if p <= 0 {
		return s
	}
	depth := 0
	for i := p - 1; i >= 0; i-- {
		switch t[i] {
		case '>', ')', ']':
			depth++
		case '<', '(', '[':
			depth--
		case ' ':
			if depth == 0 && !strings.HasSuffix(strings.TrimRight(t[:i], "_"), "operator") {
				return s[i+1:]
			}
		}
	}
	return s
}

// maskOperators hides the brackets of operator names (operator<, ->, >>,
// ()) so that bracket counting sees only template and parameter lists.
func maskOperators(s string) string {
	for _, op := range []string{"operator<<=", "operator>>=", "operator<<", "operator>>", "operator<=>", "operator<=", "operator>=", "operator->*", "operator->", "operator<", "operator>", "operator()", "operator[]"} {
		s = strings.ReplaceAll(s, op, "operator"+strings.Repeat("_", len(op)-len("operator")))
	}
	return s
}

// paramsStart is the index of the '(' that opens the parameter list: the
// one matching the last ')' before any clone suffix and qualifiers.
func paramsStart(s string) int {
	end := len(s)
	for {
		t := strings.TrimRight(s[:end], " ")
		switch {
		case strings.HasSuffix(t, "]"):
			if i := strings.LastIndex(t, " [clone "); i >= 0 {
				end = i
				continue
			}
		case strings.HasSuffix(t, " const"), strings.HasSuffix(t, " volatile"):
			end = strings.LastIndexByte(t, ' ')
			continue
		case strings.HasSuffix(t, " &&"), strings.HasSuffix(t, " &"):
			end = strings.LastIndexByte(t, ' ')
			continue
		}
		end = len(t)
		break
	}
	if end == 0 || s[end-1] != ')' {
		return -1
	}
	depth := 0
	for i := end - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// mangledAlphabet reports whether s uses only the characters of mangled
// names and their clone suffixes.
func mangledAlphabet(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '$') {
			return false
		}
	}
	return true
}
