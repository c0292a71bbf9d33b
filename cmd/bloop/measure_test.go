package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"bloop/diff"
	"bloop/hpcrun"
	"bloop/internal/testenv"
	"bloop/meas"
	"bloop/structure"
)

const measSample = "../../../shared/hpcrun-meas"

// measDir builds a measurement directory from the real hpcrun profile in
// ../shared/hpcrun-meas, its load map pointed at a copy of the sample's
// prog (the recorded /opt/demo/prog is not on this machine) and with
// libm flagged too, so that two modules are analysed. libmonitor stays
// at its recorded path, which does not exist: it must be skipped.
func measDir(t *testing.T) (dir, prog string) {
	t.Helper()
	profs := testenv.SharedGlob(t, filepath.Join(measSample, "measurements", "*.hpcrun"))
	if len(profs) != 1 {
		t.Fatalf("%d profiles in %s, want 1", len(profs), measSample)
	}
	root := t.TempDir()
	prog = filepath.Join(root, "opt", "demo", "prog")
	data, err := os.ReadFile(filepath.Join(measSample, "prog"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(prog), 0o755)
	if err := os.WriteFile(prog, data, 0o755); err != nil {
		t.Fatal(err)
	}
	prof, err := hpcrun.Read(profs[0])
	if err != nil {
		t.Fatal(err)
	}
	es := prof.LoadMap
	for i := range es {
		switch {
		case es[i].Path == "/opt/demo/prog":
			es[i].Path = prog
		case strings.HasSuffix(es[i].Path, "/libm.so.6"):
			testenv.NeedFile(t, es[i].Path, "libc6")
			es[i].Flags |= hpcrun.FlagAnalyze
		}
	}
	dir = filepath.Join(root, "m")
	os.MkdirAll(dir, 0o755)
	var b bytes.Buffer
	if err := hpcrun.Write(&b, prof); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, filepath.Base(profs[0])), b.Bytes(), 0o644)
	return dir, prog
}

// TestStructMeasurementDir runs bloop struct on a measurement directory:
// the modules hpcstruct would choose are analysed, each into
// structs/<basename>.hpcstruct equal to bloop struct of that module, and
// a module that no longer exists is skipped without failing the run.
func TestStructMeasurementDir(t *testing.T) {
	dir, prog := measDir(t)
	out := filepath.Join(t.TempDir(), "o")
	for _, mode := range [][]string{nil, {"--compat", "hpcstruct"}} {
		os.RemoveAll(meas.StructsDir(dir))
		args := append(append([]string{"-q"}, mode...), dir)
		if code := runStruct(args); code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
		ents, _ := os.ReadDir(meas.StructsDir(dir))
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if strings.Join(names, " ") != "libm.so.6.hpcstruct prog.hpcstruct" {
			t.Fatalf("%v: structs/ holds %q", mode, names)
		}
		for _, bin := range []string{prog, "/usr/lib/x86_64-linux-gnu/libm.so.6"} {
			if code := runStruct(append(append([]string{"-q", "--nocache", "-o", out}, mode...), bin)); code != 0 {
				t.Fatalf("struct %s: exit %d", bin, code)
			}
			want, _ := os.ReadFile(out)
			got, _ := os.ReadFile(filepath.Join(meas.StructsDir(dir), filepath.Base(bin)+".hpcstruct"))
			if len(want) == 0 || !bytes.Equal(got, want) {
				t.Errorf("%v: structs/%s differs from bloop struct %s", mode, filepath.Base(bin), bin)
			}
			if !bytes.Contains(got, []byte(`<LM i="2" n="`+bin+`"`)) {
				t.Errorf("%v: structs/%s does not name the module as hpcrun recorded it", mode, filepath.Base(bin))
			}
		}
	}
	// The compat file is hpcstruct's own output for prog, but for the
	// module path.
	hpcstructsProg(t, dir)
}

// hpcstructsProg checks that dir's structs/prog.hpcstruct is real
// hpcstruct's for the sample's prog (diff.Equal: ids and the module
// path aside), and returns it.
func hpcstructsProg(t *testing.T, dir string) *structure.Doc {
	t.Helper()
	got, err := structure.ParseFile(filepath.Join(meas.StructsDir(dir), "prog.hpcstruct"))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := structure.ParseFile(filepath.Join(measSample, "hpcstruct-output", "structs", "prog.hpcstruct"))
	if err != nil {
		t.Fatal(err)
	}
	if eq, diffs := diff.Equal(ref, got); !eq {
		t.Errorf("structs/prog.hpcstruct differs from hpcstruct's: %v", diffs)
	}
	return got
}

// TestStructMeasurementDirErrors checks the one-line refusals.
func TestStructMeasurementDirErrors(t *testing.T) {
	dir, _ := measDir(t)
	for _, args := range [][]string{
		{"-o", "x.hpcstruct", dir},
		{"--format", "json", dir},
		{t.TempDir()}, // a directory without profiles
	} {
		if code := runStruct(args); code == 0 {
			t.Errorf("%v: exit 0", args)
		}
	}
	// -M with a binary writes into the measurement directory.
	bin := "../../testdata/bin/loops-gcc12-O2"
	if code := runStruct([]string{"-q", "-M", dir, bin}); code != 0 {
		t.Fatalf("-M DIR BINARY: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(meas.StructsDir(dir), "loops-gcc12-O2.hpcstruct")); err != nil {
		t.Error(err)
	}
}

// TestReportMeasurementDir: bloop struct MEAS, then bloop report MEAS,
// as hpcstruct then hpcprof: the report uses the structure files just
// written (its loops and inlined call are hpcprof's tree's, with hpcprof's
// values).
func TestReportMeasurementDir(t *testing.T) {
	dir, _ := measDir(t)
	if code := runStruct([]string{"-q", "--nocache", dir}); code != 0 {
		t.Fatalf("struct: exit %d", code)
	}
	code, out, errs := captured(t, runReport, "--lines", "--min", "0", "--nocache", "--no-struct", dir)
	if code != 0 || errs != "" {
		t.Fatalf("report: exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		// hpcprof's 0.975111 s, 0.97407 s, 0.944834 s, shown as time.
		"REALTIME (sec): 975ms at 6 nodes",
		"   974ms   99.9%        0    0.0%          [inlined] kernel (called at prog.c:16)",
		"   974ms   99.9%        0    0.0%              loop at prog.c:10",
		"   945ms   96.9%    945ms   96.9%                prog.c:10",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestMeasurementDirSysroot: the real measurement as hpcrun wrote it
// (prog recorded at /opt/demo/prog, not on this machine), its binary
// copied under a sysroot as from the recording machine. Without
// --sysroot prog is skipped; with it bloop struct writes hpcstruct's own
// structs/prog.hpcstruct, the module named by its recorded path, and
// bloop report of the directory finds prog's loop and inlined call.
func TestMeasurementDirSysroot(t *testing.T) {
	profs := testenv.SharedGlob(t, filepath.Join(measSample, "measurements", "*.hpcrun"))
	if len(profs) != 1 {
		t.Fatalf("%d profiles in %s, want 1", len(profs), measSample)
	}
	if _, err := os.Stat("/opt/demo/prog"); err == nil {

		t.Skip("/opt/demo/prog exists on this machine")
	}
	dir := filepath.Join(t.TempDir(), "m")
	os.MkdirAll(dir, 0o755)
	data, err := os.ReadFile(profs[0])
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, filepath.Base(profs[0])), data, 0o644)
	sysroot := t.TempDir()
	prog, err := os.ReadFile(filepath.Join(measSample, "prog"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(sysroot, "opt/demo"), 0o755)
	os.WriteFile(filepath.Join(sysroot, "opt/demo/prog"), prog, 0o755)
	structs := meas.StructsDir(dir)

	if code := runStruct([]string{"-q", "--nocache", "--compat", "hpcstruct", dir}); code != 0 {
		t.Fatalf("without --sysroot: exit %d", code)
	}
	if _, err := os.Stat(filepath.Join(structs, "prog.hpcstruct")); err == nil {
		t.Fatal("without --sysroot, prog (not on this machine) was analysed")
	}
	_, out, _ := captured(t, runReport, "--min", "0", "--nocache", dir)
	if strings.Contains(out, "loop at prog.c:10") {
		t.Errorf("report without --sysroot found prog's loop: prog is not on this machine")
	}
	if code := runStruct([]string{"-q", "--nocache", "--compat", "hpcstruct", "--sysroot", sysroot, dir}); code != 0 {
		t.Fatalf("--sysroot: exit %d", code)
	}
	got := hpcstructsProg(t, dir)
	if lm := got.Root.Children[0]; lm.Value("n") != "/opt/demo/prog" {
		t.Errorf("LM n=%q, want the recorded /opt/demo/prog", lm.Value("n"))
	}

	os.RemoveAll(structs) // the report analyses prog itself, not the file just written
	code, out, errs := captured(t, runReport, "--min", "0", "--nocache", "--sysroot", sysroot, dir)
	if code != 0 {
		t.Fatalf("report --sysroot: exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{"[inlined] kernel (called at prog.c:16)", "loop at prog.c:10"} {
		if !strings.Contains(out, want) {
			t.Errorf("report --sysroot lacks %q:\n%s", want, out)
		}
	}
}
