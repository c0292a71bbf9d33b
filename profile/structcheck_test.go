package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/loader"
	"bloop/sample"
	"bloop/structure"
)

const (
	refs     = "../../shared/hpcstruct-refs"
	hpctests = "../../shared/hpctoolkit-tests"
)

// TestStructCheck checks structure files against binaries: every file
// of hpcstruct (real HPCToolkit) or bloop for its own binary agrees, one
// of another build does not.
func TestStructCheck(t *testing.T) {
	cases := []struct {
		structure, bin string
		ok             bool
	}{
		{refs + "/struct/ctrl-gcc12-O2.hpcstruct", refs + "/bin/ctrl-gcc12-O2", true},
		{refs + "/struct/ctrl-gcc12-O2.so.hpcstruct", refs + "/bin/ctrl-gcc12-O2.so", true},
		{refs + "/struct/tmpl-clang14-O2.hpcstruct", refs + "/bin/tmpl-clang14-O2", true},
		{refs + "/struct/nest-gfortran12-O2.hpcstruct", refs + "/bin/nest-gfortran12-O2", true},
		{hpctests + "/struct/inlines+loops-x86_64-gcc12-dr.hpcstruct", hpctests + "/bin/inlines+loops-x86_64-gcc12-dr", true},
		{hpctests + "/struct/inlines+loops-x86_64-llvm15-r.hpcstruct", hpctests + "/bin/inlines+loops-x86_64-llvm15-r", true},
		{"../testdata/golden/loops-gcc12-O2.hpcstruct", "../testdata/bin/loops-gcc12-O2", true},
		{"../testdata/golden/stl-clang14-O2.hpcstruct", "../testdata/bin/stl-clang14-O2", true},
		// Real hpcstruct ran on the debug build of libstdc++ (libstdc++6-12-dbg).
		{"../../shared/hpcstruct-real/libstdc++.so.6.0.30.hpcstruct", "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30", true},

		{refs + "/struct/ctrl-gcc12-O2.hpcstruct", refs + "/bin/ctrl-gcc12-O3", false},
		{refs + "/struct/ctrl-clang14-O2.hpcstruct", refs + "/bin/ctrl-gcc12-O2", false},
		{refs + "/struct/tmpl-gcc12-O2.hpcstruct", refs + "/bin/tmpl-gcc12-O3", false},
		{hpctests + "/struct/inlines+loops-x86_64-llvm15-0.hpcstruct", hpctests + "/bin/inlines+loops-x86_64-llvm7-0", false},
		{"../testdata/golden/loops-clang14-O2.hpcstruct", "../testdata/bin/loops-gcc12-O2", false},
		{"../testdata/golden/loops-gcc12-O3.hpcstruct", "../testdata/bin/loops-gcc12-O2", false},
		// The same library's optimized build is another binary than its debug build.
		{"../../shared/hpcstruct-real/libstdc++.so.6.0.30.hpcstruct", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", false},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.structure)+" on "+filepath.Base(c.bin), func(t *testing.T) {
			if _, err := os.Stat(c.bin); err != nil {
				t.Fatalf("no %s", c.bin)
			}
			if _, err := os.Stat(c.structure); err != nil {
				t.Fatalf("no %s", c.structure)
			}
			doc, err := structure.ParseFile(c.structure)
			if err != nil {
				t.Fatal(err)
			}
			img, err := loader.Open(c.bin, loader.Options{SkipDescriptors: true})
			if err != nil {
				t.Fatal(err)
			}
			lms := indexDoc(doc)
			if len(lms) != 1 {
				t.Fatalf("%d LMs", len(lms))
			}
			chk := checkStructure(lms[0].node, img)
			if chk.ok() != c.ok || chk.procs == 0 {
				t.Errorf("accepted %v, want %v: %v", chk.ok(), c.ok, chk)
			}
			t.Log(chk)
		})
	}
}

// fakeRecording writes a recording of bin (mapped whole at one base)
// whose samples are at the given file addresses, without stacks: enough
// to attribute their innermost frames.
func fakeRecording(t *testing.T, bin string, addrs ...uint64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fake.rec")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	const base = 0x555555554000
	w := sample.NewWriter(f)
	w.Meta(sample.Meta{Command: []string{bin}, Event: "cpu-clock", Freq: 1000})
	w.Mmap(sample.Mmap{Pid: 1, Tid: 1, Addr: base, Len: uint64(st.Size()+0xfff) &^ 0xfff, Prot: 5, File: bin})
	for i, a := range addrs {
		w.Sample(&sample.Sample{Pid: 1, Tid: 1, Time: uint64(i + 1), IP: base + a, SP: 0x7ffc00000000})
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

// rewriteLM copies a structure file with its LM named name.
func rewriteLM(t *testing.T, file, name string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := structure.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	old := indexDoc(doc)[0].name
	out := filepath.Join(t.TempDir(), filepath.Base(file))
	s := strings.Replace(string(data), `<LM i="2" n="`+old+`"`, `<LM i="2" n="`+name+`"`, 1)
	if err := os.WriteFile(out, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStructFileOfOtherBuild gives Build a structure file for a recording
// of loops-gcc12-O2: its own is used (the samples land in matmul's
// innermost loop); one of the clang build, or of the -O3 build under the
// module's own path, is refused with one line naming both files and
// saying what differed; one whose LM names another path but whose code
// matches is used with a warning.
func TestStructFileOfOtherBuild(t *testing.T) {
	bin, _ := filepath.Abs("../testdata/bin/loops-gcc12-O2")
	rec := fakeRecording(t, bin, 0x1552, 0x1552, 0x1560)
	cases := []struct {
		name      string
		structure string
		errParts  []string // empty: accepted
		warn      bool
	}{
		{"own", "../testdata/golden/loops-gcc12-O2.hpcstruct", nil, false},
		{"own, LM elsewhere", rewriteLM(t, "../testdata/golden/loops-gcc12-O2.hpcstruct", "/elsewhere/loops-gcc12-O2"), nil, true},
		{"own, LM renamed", rewriteLM(t, "../testdata/golden/loops-gcc12-O2.hpcstruct", "renamed"), nil, true},
		{"clang build", "../testdata/golden/loops-clang14-O2.hpcstruct",
			[]string{"loops-clang14-O2.hpcstruct", "matches no module", bin, "procedures at their symbol's address"}, false},
		{"-O3 build under this path", rewriteLM(t, "../testdata/golden/loops-gcc12-O3.hpcstruct", bin),
			[]string{"loops-gcc12-O3.hpcstruct", "is of another build than " + bin, "procedures at their symbol's address"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Build(rec, Options{StructFiles: []string{c.structure}, Analyze: func(string) bool { return false }})
			if len(c.errParts) > 0 {
				if err == nil {
					t.Fatal("accepted")
				}
				for _, s := range c.errParts {
					if !strings.Contains(err.Error(), s) || strings.Contains(err.Error(), "\n") {
						t.Errorf("error lacks %q or is not one line: %v", s, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if warned := len(p.Warnings) > 0; warned != c.warn {
				t.Errorf("warnings %q, want some: %v", p.Warnings, c.warn)
			}
			var inLoop uint64
			for _, fe := range p.Flat(false) {
				if fe.Elem.Kind == ElemLoop && fe.Elem.Line == 21 && fe.Proc == "matmul" {
					inLoop = fe.Excl
				}
			}
			if inLoop != 3 {
				t.Errorf("%d of 3 samples in matmul's loop at line 21, from the structure file", inLoop)
			}
		})
	}
}

// TestStructFileRealHpcstruct uses real hpcstruct's file for a shared
// library of HPCToolkit's corpus, whose LM names the path it had where it
// was analysed: accepted, with a warning naming both paths.
func TestStructFileRealHpcstruct(t *testing.T) {
	bin, _ := filepath.Abs(hpctests + "/bin/inlines+loops-x86_64-gcc12-dr")
	sfile := hpctests + "/struct/inlines+loops-x86_64-gcc12-dr.hpcstruct"
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no %s", bin)
	}
	p, err := Build(fakeRecording(t, bin, 0x1138), Options{StructFiles: []string{sfile}, Analyze: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "/builds/") || !strings.Contains(p.Warnings[0], bin) {
		t.Errorf("warnings %q, want one naming the LM's path and the module's", p.Warnings)
	}
	other := hpctests + "/struct/inlines+loops-x86_64-llvm15-dr.hpcstruct"
	if _, err := Build(fakeRecording(t, bin, 0x1138), Options{StructFiles: []string{other}}); err == nil {
		t.Errorf("the llvm15 build's structure file was accepted for the gcc12 build")
	}
}
