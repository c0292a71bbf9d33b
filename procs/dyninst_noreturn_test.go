package procs

import "testing"

// TestDyninstNoReturn: Dyninst 12.3 knows its own list of names only, with
// or without @plt and a symbol version; bloop's NoReturn knows more.
func TestDyninstNoReturn(t *testing.T) {
	for _, tc := range []struct {
		name          string
		dyninst, ours bool
	}{
		{"exit@plt", true, true},
		{"abort@GLIBC_2.2.5", true, true},
		{"_ZSt20__throw_length_errorPKc@plt", true, true},
		{"_ZSt17__throw_bad_allocv", true, true},
		// gcc 11's: not in Dyninst's list, so a call through its stub returns.
		{"_ZSt28__throw_bad_array_new_lengthv@plt", false, true},
		{"_gfortran_generate_error", false, true},
		// Dyninst's names that bloop's list does not hold.
		{"fancy_abort", true, false},
		{"malloc", false, false},
	} {
		if got := DyninstNoReturn(tc.name); got != tc.dyninst {
			t.Errorf("DyninstNoReturn(%s) = %v", tc.name, got)
		}
		if got := NoReturn(tc.name); got != tc.ours {
			t.Errorf("NoReturn(%s) = %v", tc.name, got)
		}
	}
}
