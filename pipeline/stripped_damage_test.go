package pipeline

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"bloop/internal/testenv"
	"bloop/loader"
	"bloop/structure"
)

// TestStrippedDamaged runs the whole analysis on damaged stripped files,
// where every procedure is inferred from the code: whatever the bytes,
// it must not panic. (A section table whose executable sections overlap
// made the sweep slice past a section's end.)
func TestStrippedDamaged(t *testing.T) {
	strip := testenv.Need(t, "strip")
	dir := t.TempDir()
	for _, c := range []struct {
		bin  string
		args []string
	}{
		{"switch-clang14-O3", []string{"-R", ".eh_frame", "-R", ".eh_frame_hdr"}},
		{"tmpl-gcc12-O2", nil},
		{"libinline-gcc12-O2.so", nil},
	} {
		st := filepath.Join(dir, c.bin)
		if out, err := exec.Command(strip, append(append([]string{}, c.args...), "-o", st, filepath.Join(corpusBin, c.bin))...).CombinedOutput(); err != nil {
			t.Fatalf("strip: %v\n%s", err, out)
		}
		good, err := os.ReadFile(st)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewSource(1))
		for k := range 100 {
			b := append([]byte(nil), good...)
			for range 1 + rng.Intn(40) {
				b[64+rng.Intn(len(b)-64)] = byte(rng.Intn(256))
			}
			if err := analyseBytes(filepath.Join(dir, "damaged"), b); err != nil {
				t.Fatalf("%s (strip %v), damaged copy %d: %v", c.bin, c.args, k, err)
			}
		}
	}
}

// analyseBytes writes b to path and analyses it, turning a panic into an
// error; files the loader refuses are fine.
func analyseBytes(path string, b []byte) (err error) {
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return err
	}
	img, err := loader.Open(path, loader.Options{})
	if err != nil {
		return nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	_, err = Run(img, Options{Workers: 2}, func(string, *structure.Scope) error { return nil })
	return err
}
