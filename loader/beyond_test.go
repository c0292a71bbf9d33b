package loader

import (
	"strings"
	"testing"
)

// TestBeyond: gcc ends main's sequence with a row where it starts, after
// the call to abort@plt that Dyninst on aarch64 does not know never
// returns. Read with hpcstruct's spelling, the row covers the padding up
// to _start for everyone, and, for the procedures of main's unit, which
// see it whole, on up to the unit's next sequence (fatal's at 0xae0), over
// _start and call_weak_fn, which main's parse falls into: hpcstruct gives
// that code line 53 in main and line 0 in _start's own lookups.
func TestBeyond(t *testing.T) {
	img, err := Open("../testdata/bin-arm64/noreturn-gcc12-O2", Options{RawFileNames: true})
	if err != nil {
		t.Fatal(err)
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
	if got := img.Lines.Beyond(main); len(got) != 1 || got[0].Addr != 0x990 || got[0].End != 0xae0 ||
		got[0].Line != 53 || !strings.HasSuffix(got[0].File, "noreturn.c") {
		t.Errorf("Beyond(main) = %+v, want noreturn.c:53 over [0x990, 0xae0)", got)
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

// TestBeyondSharedStart: libc.so.6's _nl_load_domain.cold ends its
// sequence with a row of line 509 at 0x2639f, where abort's code and
// abort.c's rows start. The image's table gives abort.c there; the
// procedures of loadmsgcat.c's unit, which Dyninst asks first, see line
// 509 up to their unit's next sequence (_nl_load_domain's at 0x370b0):
// hpcstruct writes the code of abort that _nl_load_domain's parse reaches
// (through the .cold part's call to the next instruction) on line 509.
func TestBeyondSharedStart(t *testing.T) {
	const libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	if !isBuild(t, libc, "93ac61ec5a8eb1396f9fbd350e3169a558528a40") {
		t.Skip("not the libc the facts are about")
	}
	img, err := Open(libc, Options{RawFileNames: true})
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := img.Lines.Lookup(0x263a0); !ok || !strings.HasSuffix(r.File, "/abort.c") {
		t.Errorf("abort's code: %+v %v, want abort.c's row", r, ok)
	}
	sub := img.SubprogramAt(0x370b0)
	if sub == nil {
		t.Fatal("no DWARF procedure at _nl_load_domain")
	}
	var got []LineRow
	for _, r := range img.Lines.Beyond(sub) {
		if r.Addr <= 0x263a0 && 0x263a0 < r.End {
			got = append(got, r)
		}
	}
	if len(got) != 1 || got[0].Addr != 0x2639f || got[0].End != 0x370b0 || got[0].Line != 509 || !strings.HasSuffix(got[0].File, "/loadmsgcat.c") {
		t.Errorf("Beyond(_nl_load_domain) at 0x263a0: %+v, want loadmsgcat.c:509 over [0x2639f, 0x370b0)", got)
	}
}
