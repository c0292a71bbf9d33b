package heuristic

import (
	"testing"

	"bloop/loader"
)

// TestAliases: a body whose name the preprocessor picks from two
// declarators shares the region of the second; a procedure whose entry
// line is in its own region, or far from a sibling, does not.
func TestAliases(t *testing.T) {
	sso := &loader.Descriptor{Name: "_M_sso_shim", File: "s.cc", Line: 794, HasCode: true}
	cow := &loader.Descriptor{Name: "_M_cow_shim", File: "s.cc", Line: 796, HasCode: true}
	f := &loader.Descriptor{Name: "f", File: "s.cc", Line: 900, HasCode: true}
	g := &loader.Descriptor{Name: "g", File: "s.cc", Line: 901, HasCode: true}
	h := &loader.Descriptor{Name: "h", File: "s.cc", Line: 920, HasCode: true}
	k := &loader.Descriptor{Name: "k", File: "s.cc", Line: 940, HasCode: true}
	img := &loader.Image{
		Descriptors: []*loader.Descriptor{sso, cow, f, g, h, k},
		Procs: []*loader.Subprogram{
			{Name: "_M_sso_shim", Desc: sso, EntryPC: 0x100}, // entry at 798: the shared body
			{Name: "f", Desc: f, EntryPC: 0x200},             // entry at 900: its own line
			{Name: "h", Desc: h, EntryPC: 0x300},             // entry at 945: too far below
		},
		Lines: loader.NewLineTable([]loader.LineRow{
			{Addr: 0x100, End: 0x110, File: "s.cc", Line: 798},
			{Addr: 0x200, End: 0x210, File: "s.cc", Line: 900},
			{Addr: 0x300, End: 0x310, File: "s.cc", Line: 945},
		}),
	}
	b := NewBounds(img)
	if b.alias[sso] != cow || len(b.alias) != 1 {
		t.Errorf("aliases %v, want only _M_sso_shim -> _M_cow_shim", b.alias)
	}
	for _, c := range []struct {
		d, o *loader.Descriptor
		want bool
	}{{sso, cow, true}, {sso, sso, true}, {cow, sso, false}, {f, g, false}, {h, k, false}} {
		if got := b.owns(c.d, c.o); got != c.want {
			t.Errorf("owns(%s, %s) = %v, want %v", c.d.Name, c.o.Name, got, c.want)
		}
	}
}
