package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"bloop/internal/testenv"
	"bloop/loader"
	"bloop/pipeline"
)

// TestStructStripped runs bloop struct on stripped copies of the example:
// it must find _start, the program's procedures (named by DWARF when the
// debug sections are kept) and their loops, the same at -j1 and -j2, and
// -v must warn when there is neither symbol nor DWARF and say where the
// procedures came from.
func TestStructStripped(t *testing.T) {
	strip := testenv.Need(t, "strip")
	if _, err := os.Stat(example); err != nil {
		t.Fatal("testdata binary missing")
	}
	cases := []struct {
		name    string
		args    []string
		output  []string // parts of the structure that must appear
		sources []string // parts of the -v line that must appear
		warn    bool
	}{
		{"strip", nil, []string{`n="targ`},
			[]string{"symbols 3", "entry 1", "eh_frame 6", "init_array 4"}, true},
		{"strip without eh_frame", []string{"-R", ".eh_frame", "-R", ".eh_frame_hdr"}, []string{`n="targ`},
			[]string{"symbols 3", "entry 1", "eh_frame 0", "init_array 4"}, true},
		{"strip keeping DWARF", []string{"--keep-section=.debug_*"}, []string{`n="main" l="59"`, `n="matmul"`},
			[]string{"symbols 3", "entry 1", "eh_frame 6", "init_array 4"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "prog")
			if out, err := exec.Command(strip, append(c.args, "-o", bin, example)...).CombinedOutput(); err != nil {
				if strings.Contains(c.name, "DWARF") {
					t.Skipf("strip without --keep-section (binutils < 2.36): %v", err)
				}
				t.Fatalf("strip: %v\n%s", err, out)
			}
			out, out2 := filepath.Join(dir, "prog.hpcstruct"), filepath.Join(dir, "prog-j2.hpcstruct")
			if code := runStruct([]string{"-j1", "-o", out, bin}); code != 0 {
				t.Fatalf("exit %d", code)
			}
			if code := runStruct([]string{"-j2", "-o", out2, bin}); code != 0 {
				t.Fatalf("exit %d", code)
			}
			xml, _ := os.ReadFile(out)
			if xml2, _ := os.ReadFile(out2); !bytes.Equal(xml, xml2) {
				t.Errorf("-j1 and -j2 differ")
			}
			for _, want := range append(c.output, `n="_start"`, "<L ") {
				if !bytes.Contains(xml, []byte(want)) {
					t.Errorf("output has no %s", want)
				}
			}
			img, err := pipeline.Open(bin, loader.Options{}, pipeline.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var msg bytes.Buffer
			reportSources(&msg, bin, img, pipeline.Procedures(img, pipeline.Options{}))
			for _, want := range c.sources {
				if !strings.Contains(msg.String(), want) {
					t.Errorf("-v report lacks %q:\n%s", want, msg.String())
				}
			}
			if warned := strings.Contains(msg.String(), "warning: "+bin+": no symbols and no DWARF"); warned != c.warn {
				t.Errorf("warned %v, want %v:\n%s", warned, c.warn, msg.String())
			}
		})
	}
}
