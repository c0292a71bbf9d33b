package scopes

import "testing"

// TestDemangle pins names as hpcstruct (the GNU demangler) writes them.
func TestDemangle(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"main", "main"},
		{"_ZSt10_ConstructI3VecIdLi3EEJEEvPT_DpOT0_", "std::_Construct<Vec<double, 3>>(Vec<double, 3>*)"},
		{"_ZSt10_ConstructIiJEEvPT_DpOT0_", "std::_Construct<int>(int*)"},
		{"_ZNSt12_Vector_baseIiSaIiEED1Ev", "std::_Vector_base<int, std::allocator<int> >::~_Vector_base()"},
		{"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE12_M_constructIPKcEEvT_S8_St20forward_iterator_tag",
			"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_construct<char const*>(char const*, char const*, std::forward_iterator_tag)"},
		{"_ZNSt8_Rb_treeINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt4pairIKS5_iESt10_Select1stIS8_ESt4lessIS5_ESaIS8_EE8_M_eraseEPSt13_Rb_tree_nodeIS8_E.isra.0",
			"std::_Rb_tree<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, int>, std::_Select1st<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, int> >, std::less<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >, std::allocator<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, int> > >::_M_erase(std::_Rb_tree_node<std::pair<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const, int> >*) [clone .isra.0]"},
	} {
		if got := Demangle(c.in); got != c.want {
			t.Errorf("Demangle(%s)\\n got %s\\nwant %s", c.in, got, c.want)
		}
	}
}
