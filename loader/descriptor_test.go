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
			t.Fatalf("corpus: %v", err)
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

// TestDeclFileFromSpecification: clang's out-of-class definition of a
// member (std::_Deque_base's destructor, stl_deque.h:618) has a line but
// no file, which its declaration gives; without it the callee's file was
// empty and the procedure had no descriptor.
func TestDeclFileFromSpecification(t *testing.T) {
	img, err := Open("../testdata/bin/stl-clang14-O2", Options{})
	if err != nil {
		t.Fatalf("corpus: %v", err)
	}
	var walk func(ins []*Inline)
	walk = func(ins []*Inline) {
		for _, in := range ins {
			if in.DeclLine != 0 && in.DeclFile == "" {
				t.Errorf("inlined %s: line %d without a file", in.Name, in.DeclLine)
			}
			walk(in.Children)
		}
	}
	for _, sp := range img.Procs {
		walk(sp.Inlines)
	}
	found := false
	for _, d := range img.Descriptors {
		found = found || d.Name == "~_Deque_base" && d.Line == 618 && filepath.Base(d.File) == "stl_deque.h"
	}
	if !found {
		t.Error("no descriptor for ~_Deque_base at stl_deque.h:618")
	}
}
