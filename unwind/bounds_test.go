package unwind

import (
	"testing"

	"bloop/internal/testenv"
	"bloop/loader"
)

// TestLibcBounds compares the procedure starts of the stripped system libc
// (dynamic symbols plus inference) with the FDE starts of its .eh_frame.
func TestLibcBounds(t *testing.T) {
	const path = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	if testing.Short() {
		t.Skip("-short")
	}
	testenv.NeedFile(t, path, "libc6")
	img, err := loader.Open(path, loader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fdes, err := ehTable(path)
	if err != nil {
		t.Fatal(err)
	}
	m := NewModule(img)
	starts := map[uint64]bool{}
	inferred := 0
	for _, p := range m.Procs() {
		starts[p.Lo] = true
		if p.Inferred {
			inferred++
		}
	}
	hit := 0
	for _, f := range fdes {
		if starts[f.Begin()] {
			hit++
		}
	}
	t.Logf("%d procedures (%d inferred); %d of %d FDE starts are procedure starts (%.1f%%)",
		len(m.Procs()), inferred, hit, len(fdes), 100*float64(hit)/float64(len(fdes)))
	// Debian 12's libc: 3707 of 3713. An FDE that starts no procedure is
	// a procedure the unwinder would take for its neighbour's tail.
	if len(fdes) == 0 || float64(hit) < 0.995*float64(len(fdes)) {
		t.Errorf("%d of %d FDE starts are procedure starts, want at least 99.5%%", hit, len(fdes))
	}

}
