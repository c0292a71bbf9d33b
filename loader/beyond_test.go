package loader

import (
	"strings"
	"testing"
)

// TestBeyond: gcc ends main's sequence with a row where it starts, after
// the call to abort@plt that Dyninst on aarch64 does not know never
// returns. Read with hpcstruct's spelling, the row covers the padding up
// to _start for everyone, and, for the procedures of main's unit only,
// on up to the unit's next sequence (fatal's at 0xae0), over _start and
// call_weak_fn, which main's parse falls into: hpcstruct gives that code
// line 53 in main and line 0 in _start's own lookups.
func TestBeyond(t *testing.T) {
	img, err := Open("../testdata/bin-arm64/noreturn-gcc12-O2", Options{RawFileNames: true})
	if err != nil {
		t.Skip(err)
	}
	if r, ok := img.Lines.Lookup(0x994); !ok || r.Line != 53 || r.Addr != 0x990 || r.End != 0x9c0 {
		t.Errorf("padding after main: %+v %v, want line 53 over [0x990, 0x9c0)", r, ok)
	}
	if r, ok := img.Lines.Lookup(0x9c0); ok {
		t.Errorf("_start has row %+v in the image's table", r)
	}
	main := img.SubprogramAt(0x840)
	if main == nil {
		t.Fatal("no DWARF procedure at main")
	}
	if got := img.Lines.Beyond(main); len(got) != 1 || got[0].Addr != 0x9c0 || got[0].End != 0xae0 ||
		got[0].Line != 53 || !strings.HasSuffix(got[0].File, "noreturn.c") {
		t.Errorf("Beyond(main) = %+v, want noreturn.c:53 over [0x9c0, 0xae0)", got)
	}
	if got := img.Lines.Beyond(nil); got != nil {
		t.Errorf("Beyond(nil) = %+v", got)
	}
	if plain, err := Open("../testdata/bin-arm64/noreturn-gcc12-O2", Options{}); err == nil {
		if got := plain.Lines.Beyond(plain.SubprogramAt(0x840)); got != nil {
			t.Errorf("without hpcstruct's spelling: Beyond(main) = %+v", got)
		}
	}
}
