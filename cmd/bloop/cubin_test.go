package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStructCubin: a cubin gives a structure file and no warning. Without
// --gpucfg hpcstruct finds no loops in cubins either, so their absence is
// no shortcoming to warn about, as it is for ppc64le and aarch64.
func TestStructCubin(t *testing.T) {
	bin := "../../../shared/hpctoolkit-tests/bin/inlines+loops-sm_62-nvcc102-0"
	if _, err := os.Stat(bin); err != nil {
		t.Skip("reference cubins not present")
	}
	dir := t.TempDir()
	errFile, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer func(f *os.File) { os.Stderr = f }(os.Stderr)
	os.Stderr = errFile
	out := filepath.Join(dir, "cubin.hpcstruct")
	code := runStruct([]string{"--compat", "hpcstruct", "-o", out, bin})
	os.Stderr.Close()
	msg, _ := os.ReadFile(errFile.Name())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	if len(msg) > 0 {
		t.Errorf("stderr: %s", msg)
	}
	xml, _ := os.ReadFile(out)
	if !strings.Contains(string(xml), `<P i="4" n="f2()" ln="_Z2f2v" l="9" v="{[0x12ee0-0x12ee1)}">`) {
		t.Errorf("no f2() at 0x12ee0, where hpcstruct lays it out:\n%s", xml)
	}
}
