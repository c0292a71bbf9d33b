package pipeline

import (
	"bytes"
	"strings"
	"testing"

	"bloop/internal/testenv"
	"bloop/structure"
)

// TestCompatTemplateNames checks, on our own STL program, the names compat
// mode writes for function template instances: hpcstruct demangles every
// name with libiberty's DMGL_RET_DROP, so neither the operator() of
// std::sort's comparators (inlined, const member templates whose mangling
// carries bool) nor a namespace-level template instance returning an
// iterator (std::__unguarded_partition) shows its return type.
func TestCompatTemplateNames(t *testing.T) {
	testenv.Need(t, "c++filt")
	for _, bin := range []string{"stl-gcc12-O2", "stl-clang14-O2"} {
		t.Run(bin, func(t *testing.T) {
			doc, err := structure.Parse(bytes.NewReader(compatStructure(t, corpusBin+"/"+bin, 2)), bin)
			if err != nil {
				t.Fatal(err)
			}
			counts := map[string]int{}
			var walk func(n *structure.Node)
			walk = func(n *structure.Node) {
				name := n.Value("n")
				if (n.Tag == "P" || n.Tag == "A") && name != "" && name != "<inline>" {
					if r := returnTypePrefix(name); r != "" {
						t.Errorf("%s n=%q starts with a return type %q", n.Tag, name, r)
					}
					for _, p := range []string{"__gnu_cxx::__ops::_Iter_less_iter::operator()<", "__gnu_cxx::__ops::_Val_less_iter::operator()<", "std::__unguarded_partition<"} {
						if strings.HasPrefix(name, p) {
							counts[p]++
						}
					}
				}
				for _, c := range n.Children {
					walk(c)
				}
			}
			walk(doc.Root)
			for _, p := range []string{"__gnu_cxx::__ops::_Iter_less_iter::operator()<", "__gnu_cxx::__ops::_Val_less_iter::operator()<", "std::__unguarded_partition<"} {
				if counts[p] == 0 {
					t.Errorf("no name starting %q", p)
				}
			}
		})
	}
}

// returnTypePrefix returns the text before the qualified name when a
// demangled name starts with a type: a space outside brackets before the
// parameter list. Operator names (operator(), operator new, conversion
// operators) and "(anonymous namespace)" are part of the name.
func returnTypePrefix(name string) string {
	s := strings.ReplaceAll(name, "(anonymous namespace)", "{anonymous_namespace}") // same length
	depth, space := 0, -1
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '(' && strings.HasSuffix(s[:i], "operator") && strings.HasPrefix(s[i:], "()"):
			i++ // the name operator()
		case c == '(' && depth == 0:
			if space < 0 {
				return "" // the parameter list, after the name only
			}
			return name[:space]
		case c == '<' || c == '(':
			depth++
		case c == '>' || c == ')':
			depth--
		case c == ' ' && depth == 0 && !strings.HasSuffix(s[:i], "operator") && !strings.HasSuffix(s[:i], ","):
			if !strings.Contains(s[:i], "operator ") {
				space = i
			}
		}
	}
	return ""
}

func TestReturnTypePrefix(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"bool __gnu_cxx::__ops::_Iter_less_iter::operator()<int*, int*>(int*, int*) const", "bool"},
		{"__gnu_cxx::__ops::_Iter_less_iter::operator()<int*, int*>(int*, int*) const", ""},
		{"std::num_put<char> const& std::__check_facet<std::num_put<char> >(std::num_put<char> const*)", "std::num_put<char> const&"},
		{"std::__check_facet<std::num_put<char> >(std::num_put<char> const*)", ""},
		{"operator new[](unsigned long)@plt [libstdc++.so.6.0.30]", ""},
		{"std::pmr::(anonymous namespace)::chunk::owns(void*, unsigned long)", ""},
		{"std::__facet_shims::__any_string::operator std::string() const", ""},
		{"main", ""},
	} {
		if got := returnTypePrefix(c.in); got != c.want {
			t.Errorf("returnTypePrefix(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
