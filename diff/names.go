package diff

import (
	"strings"
)

// Compilers name the copies they make of a function by appending
// suffixes to its symbol: gcc's clones (.constprop.N, .isra.N,
// .lto_priv.N, .localalias), clang's specializations (.specialized.N), the
// outlined parts of a split body (.part.N from partial inlining,
// .cold and .cold.N from hot/cold splitting, ._omp_fn.N from OpenMP),
// clang's ThinLTO promotions (.llvm.NNNN) and a bare .N numbering
// (gfortran's internal procedures, gcc's nested functions). A symbol is
// the copy of the function named by its prefix when every suffix is one
// of these; a dot in a name is otherwise part of it (__x86.get_pc_thunk.bx).
// Demangled names carry the same suffixes as " [clone .isra.0]".

// suffixKind says what a suffix makes of the symbol.
type suffixKind int

const (
	suffixClone suffixKind = iota // a whole copy of the body, specialised
	suffixPart                    // a piece of the body outlined from it
	suffixAlias                   // another name for the same copy
)

// suffixWords maps the word of a suffix to its kind and whether a number
// follows it (".part.0"), may follow it (".cold", ".cold.1"), or not.
var suffixWords = map[string]struct {
	kind   suffixKind
	number int // 0: never, 1: always, 2: optional
}{
	"constprop":   {suffixClone, 1},
	"isra":        {suffixClone, 1},
	"lto_priv":    {suffixAlias, 1},
	"llvm":        {suffixAlias, 1},
	"specialized": {suffixClone, 1},
	"localalias":  {suffixAlias, 0},
	"part":        {suffixPart, 1},
	"cold":        {suffixPart, 2},
	"_omp_fn":     {suffixPart, 1},
}

// cloneName is a symbol split into the function it was made from and
// the suffixes that make it a copy.
type cloneName struct {
	base    string
	variant string // base and the clone suffixes, in order (no renamings): the copy the parts belong to
	parts   string // the part suffixes, in order ("" for the copy's own entry)
}

// parseClone splits a link name (mangled or not) at its clone suffixes.
func parseClone(name string) cloneName {
	i := strings.IndexByte(name, '.')
	if i <= 0 {
		return cloneName{base: name, variant: name}
	}
	words := strings.Split(name[i+1:], ".")
	var variant, parts strings.Builder
	for k := 0; k < len(words); k++ {
		w := words[k]
		if isNumber(w) {
			// A bare number: gfortran's and gcc's numbering of local
			// functions, a renaming.
			continue
		}
		sw, ok := suffixWords[w]
		if !ok {
			return cloneName{base: name, variant: name}
		}
		text := "." + w
		switch {
		case sw.number >= 1 && k+1 < len(words) && isNumber(words[k+1]):
			k++
			text += "." + words[k]
		case sw.number == 1:
			return cloneName{base: name, variant: name}
		}
		switch sw.kind {
		case suffixPart:
			parts.WriteString(text)
		case suffixClone:
			variant.WriteString(text)
		}
	}
	base := name[:i]
	return cloneName{base: base, variant: base + variant.String(), parts: parts.String()}
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// prettyBase is a demangled or plain procedure name without what the
// structure file adds to it: the " [clone .x]" groups of demangled
// clones and the " [lib.so]" hpcstruct appends to the names of
// procedures in shared libraries. It is the name an inlined call of the
// function carries.
func prettyBase(n string) string {
	for strings.HasSuffix(n, "]") {
		i := strings.LastIndex(n, " [")
		if i < 0 {
			break
		}
		n = n[:i]
	}
	if c := parseClone(n); c.base != n && !strings.ContainsAny(n, "( ") {
		// A C name with its suffixes (n is ln in C).
		return c.base
	}
	return n
}

// isStub reports whether a procedure is a PLT stub (name@plt): the
// linker's, not a function of the source.
func isStub(name string) bool { return strings.HasSuffix(name, "@plt") }

// stubName is a PLT stub's name, but that the stubs hpcstruct names by
// their target's address (targ1090@plt: a slot whose symbol is not
// known) are one, whose addresses differ from build to build.
func stubName(name string) string {
	if h, ok := strings.CutPrefix(strings.TrimSuffix(name, "@plt"), "targ"); ok && h != "" && strings.Trim(h, "0123456789abcdef") == "" {
		return "targ@plt"
	}
	return name
}

// shortName is the unqualified name of a function without its template
// arguments and parameters: "__merge_adaptive" of gcc's
// "__merge_adaptive<..., <lambda(const Item&, const Item&)> >" and of
// clang's "std::__merge_adaptive<..., $_0>(...)". Compilers spell the
// rest differently (lambdas, default template arguments, qualification),
// so with the file and line it identifies a function across compilers
// where the whole names do not.
func shortName(pretty string) string {
	n := prettyBase(pretty)
	for _, q := range []string{" const", " volatile", " &&", " &"} {
		n = strings.TrimSuffix(n, q)
	}
	n = trimGroup(n, '(', ')')
	n = trimGroup(n, '<', '>')
	depth := 0
	for i := len(n) - 1; i > 0; i-- {
		switch n[i] {
		case '>', ')':
			depth++
		case '<', '(':
			depth--
		case ':':
			if depth == 0 && n[i-1] == ':' {
				return n[i+1:]
			}
		}
	}
	return n
}

// trimGroup cuts a balanced open...close group at the end of n.
func trimGroup(n string, open, close byte) string {
	if !strings.HasSuffix(n, string(close)) {
		return n
	}
	depth := 0
	for i := len(n) - 1; i >= 0; i-- {
		switch n[i] {
		case close:
			depth++
		case open:
			depth--
			if depth == 0 {
				if i == 0 {
					return n
				}
				return n[:i]
			}
		}
	}
	return n
}
