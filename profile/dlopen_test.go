package profile

import (
	"path/filepath"
	"testing"

	"bloop/internal/rectest"
)

// TestDlopen records a program that spends its time in libm.so.6, which it
// loads with dlopen: the late mapping must be followed, so the samples land
// in libm and unwind through it to the program's entry.
func TestDlopen(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/prof/bin/dl-gcc12-O2")
	path := rectest.Record(t, bin, "60000000")
	p, err := Build(path, Options{Analyze: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	var inLibm uint64
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Elem != nil && n.Elem.Kind == ElemProc && n.Elem.Module == "libm.so.6" {
			inLibm += n.Incl
			return
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(p.Root)
	ok := float64(p.Outcomes[Complete]) / float64(max(p.Samples, 1))
	share := float64(inLibm) / float64(max(p.Samples, 1))
	t.Logf("%d samples, %.1f%% in dlopen'ed libm.so.6, %.2f%% unwound to the entry", p.Samples, 100*share, 100*ok)
	if p.Samples < 100 || share < 0.8 || ok < 0.999 {
		t.Errorf("%d samples: %.1f%% in libm (want >= 80%%), %.2f%% unwound (want >= 99.9%%)", p.Samples, 100*share, 100*ok)
	}
}
