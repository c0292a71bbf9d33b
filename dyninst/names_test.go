package dyninst

import (
	"testing"

	"bloop/loader"
	"bloop/procs"
)

// TestDyninstNoReturn: Dyninst 12.3 knows its own list of names only, with
// or without @plt and a symbol version; bloop's (procs.NoReturn) knows more.
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
		if got := Hpcstruct.NoReturnName(tc.name); got != tc.dyninst {
			t.Errorf("Hpcstruct.NoReturnName(%s) = %v", tc.name, got)
		}
		if got := procs.NoReturn(tc.name); got != tc.ours {
			t.Errorf("NoReturn(%s) = %v", tc.name, got)
		}
	}
}

// TestNoReturnLocalEntry: a call to a noreturn procedure's ppc64 local
// entry (where calls from its module land) does not return either.
func TestNoReturnLocalEntry(t *testing.T) {
	img := &loader.Image{Funcs: []*loader.Func{
		{Name: "exit", Aliases: []string{"exit"}, Addr: 0x1000, End: 0x1040, LocalEntry: 0x1008},
		{Name: "work", Aliases: []string{"work"}, Addr: 0x1040, End: 0x1080, LocalEntry: 0x1048},
	}}
	var none *Policy // the default mode's names
	noret := none.NoReturnAddrs(img)
	for a, want := range map[uint64]bool{0x1000: true, 0x1008: true, 0x1040: false, 0x1048: false} {
		if noret[a] != want {
			t.Errorf("%#x: noreturn %v, want %v", a, !want, want)
		}
	}
}
