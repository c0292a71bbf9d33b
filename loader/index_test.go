package loader

import (
	"testing"

	"bloop/structure"
)

// TestRangesClippedAtNextSymbol: a DWARF range that runs into the next
// procedure's symbol ends there (thesis 4.3), while a range starting at a
// symbol (a .cold part) is kept.
func TestRangesClippedAtNextSymbol(t *testing.T) {
	f := &Subprogram{Name: "f", Ranges: []structure.Range{{Lo: 0x100, Hi: 0x180}, {Lo: 0x300, Hi: 0x340}}}
	img := &Image{
		Funcs: []*Func{{Name: "f", Addr: 0x100}, {Name: "g", Addr: 0x140}, {Name: "f.cold", Addr: 0x300}},
		Procs: []*Subprogram{f},
	}
	img.index()
	if f.Ranges[0].Hi != 0x140 || f.Ranges[1].Hi != 0x340 {
		t.Errorf("ranges %v, want the first clipped at 0x140 and the cold one kept", f.Ranges)
	}
	for _, c := range []struct {
		addr uint64
		want *Subprogram
	}{{0x120, f}, {0x150, nil}, {0x310, f}} {
		if got := img.SubprogramAt(c.addr); got != c.want {
			t.Errorf("SubprogramAt(%#x) = %v", c.addr, got)
		}
	}
}
