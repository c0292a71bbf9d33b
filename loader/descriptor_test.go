package loader

import (
	"path/filepath"
	"testing"
)

// TestLambdaDescriptors: a lambda is a procedure the thesis engine must
// bound. gcc marks its operator() artificial and gives it no line (the
// closure type has it); clang gives the line itself. Either way the
// lambda of tmpl.cpp:44 is a member descriptor nested in main.
func TestLambdaDescriptors(t *testing.T) {
	for _, bin := range []string{"tmpl-gcc12-O2", "tmpl-clang14-O2", "tmpl-gcc12-O0"} {
		img, err := Open("../testdata/bin/"+bin, Options{})
		if err != nil {
			t.Skipf("corpus: %v", err)
		}
		var got *Descriptor
		for _, d := range img.Descriptors {
			if filepath.Base(d.File) == "tmpl.cpp" && d.Line == 44 {
				got = d
			}
		}
		if got == nil {
			t.Errorf("%s: no descriptor at tmpl.cpp:44", bin)
			continue
		}
		if !got.Member || !got.Lambda || got.Parent == nil || got.Parent.Name != "main" {
			t.Errorf("%s: lambda descriptor %+v, want a lambda member nested in main", bin, got)
		}
		// At -O0 the lambda has an out-of-line copy, which must know it.
		if bin == "tmpl-gcc12-O0" {
			found := false
			for _, sp := range img.Procs {
				found = found || sp.Desc == got
			}
			if !found {
				t.Errorf("%s: the out-of-line operator() has no descriptor", bin)
			}
		}
	}
}
