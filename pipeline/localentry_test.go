package pipeline

import (
	"testing"

	"bloop/loader"
)

// TestNoReturnLocalEntry: a call to a noreturn procedure's ppc64 local
// entry (where calls from its module land) does not return either.
func TestNoReturnLocalEntry(t *testing.T) {
	img := &loader.Image{Funcs: []*loader.Func{
		{Name: "exit", Aliases: []string{"exit"}, Addr: 0x1000, End: 0x1040, LocalEntry: 0x1008},
		{Name: "work", Aliases: []string{"work"}, Addr: 0x1040, End: 0x1080, LocalEntry: 0x1048},
	}}
	noret := noReturnAddrs(img, false)
	for a, want := range map[uint64]bool{0x1000: true, 0x1008: true, 0x1040: false, 0x1048: false} {
		if noret[a] != want {
			t.Errorf("%#x: noreturn %v, want %v", a, !want, want)
		}
	}
}
