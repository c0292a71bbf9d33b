package meas

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"bloop/hpcrun"
	"bloop/internal/testenv"
)

const sample = "../../shared/hpcrun-meas"

func realProfile(t *testing.T) string {
	t.Helper()
	ps := testenv.SharedGlob(t, filepath.Join(sample, "measurements", "*.hpcrun"))
	if len(ps) != 1 {
		t.Fatalf("%d .hpcrun files in %s, want 1", len(ps), sample)

	}
	return ps[0]
}

// TestReadLoadMapReal reads the load map hpcrun 2023.08.1 wrote; the
// expected entries are those the sample's README lists from its hex dump.
func TestReadLoadMapReal(t *testing.T) {
	es, err := hpcrun.ReadLoadMap(realProfile(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id    uint16
		path  string
		flags uint64
	}{
		{1, "/opt/demo/prog", 1},
		{2, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", 0},
		{3, "/opt/hpctoolkit-2023.08.1/prefx/lib/hpctoolkit/libhpcrun.so", 0},
		{4, "/opt/hpctoolkit-2023.08.1/prefx/lib/hpctoolkit/ext-libs/libmonitor.so.0.0.0", 1},
		{5, "/opt/demo/hpctoolkit-prog-measurements/vdso/51756ab7dcf8540e6b6afc82d9b6083e.vdso", 0},
		{6, "/usr/lib/x86_64-linux-gnu/libm.so.6", 0},
		{7, "/usr/lib/x86_64-linux-gnu/libc.so.6", 0},
		{8, "/usr/lib/x86_64-linux-gnu/libelf-0.188.so", 0},
		{9, "/usr/lib/x86_64-linux-gnu/libpfm.so.4.13.0", 0},
		{10, "/usr/lib/x86_64-linux-gnu/libpapi.so.7.0.0.0", 0},
		{11, "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", 0},
		{12, "/opt/hpctoolkit-2023.08.1/prefx/lib/hpctoolkit/libhpcrun_audit.so.0.0.0", 0},
	}
	if len(es) != len(want) {
		t.Fatalf("%d entries, want %d", len(es), len(want))
	}
	for i, w := range want {
		if es[i].ID != w.id || es[i].Path != w.path || es[i].Flags != w.flags {
			t.Errorf("entry %d = %+v, want %+v", i, es[i], w)
		}
	}
}

// TestChosenAsHPCStruct checks that the modules chosen from the real
// measurement directory are those hpcstruct listed in all.lm, in order,
// with the structure file names it wrote.
func TestChosenAsHPCStruct(t *testing.T) {
	realProfile(t)
	d, err := Read(filepath.Join(sample, "measurements"), "")
	if err != nil {
		t.Fatal(err)
	}
	lm, err := os.ReadFile(filepath.Join(sample, "hpcstruct-output", "all.lm"))
	if err != nil {
		t.Fatal(err)
	}
	wantPaths := strings.Fields(string(lm))
	ents, _ := os.ReadDir(filepath.Join(sample, "hpcstruct-output", "structs"))
	var wantOuts []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".hpcstruct") {
			wantOuts = append(wantOuts, e.Name())
		}
	}
	var paths, outs []string
	for _, m := range d.Chosen {
		paths = append(paths, m.Path)
		outs = append(outs, m.Out)
	}
	if strings.Join(paths, "\n") != strings.Join(wantPaths, "\n") {
		t.Errorf("chosen %q, hpcstruct's all.lm %q", paths, wantPaths)
	}
	// hpcstruct's structs/ listing is by name; ours is in load-map order.
	sortedOuts := append([]string(nil), outs...)
	sort.Strings(sortedOuts)
	if strings.Join(sortedOuts, " ") != strings.Join(wantOuts, " ") {
		t.Errorf("structure files %q, hpcstruct wrote %q", outs, wantOuts)
	}
	// Neither binary exists on this machine: both are reported skipped.
	if len(d.Modules)+len(d.Skipped) != len(d.Chosen) {
		t.Errorf("%d modules + %d skipped != %d chosen", len(d.Modules), len(d.Skipped), len(d.Chosen))
	}
}

// TestRules checks the selection rules on hand-made load maps.
func TestRules(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "a", "libsame.so")
	bin2 := filepath.Join(dir, "b", "libsame.so")
	empty := filepath.Join(dir, "empty.so")
	for _, p := range []string{bin, bin2} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	os.WriteFile(empty, nil, 0o644)
	vdsoName := "0123456789abcdef0123456789abcdef.vdso"
	os.MkdirAll(filepath.Join(dir, "vdso"), 0o755)
	os.WriteFile(filepath.Join(dir, "vdso", vdsoName), []byte("x"), 0o644)
	write := func(name string, es []hpcrun.LoadModule) {
		var b bytes.Buffer
		if err := hpcrun.Write(&b, &hpcrun.Profile{LoadMap: es}); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644)
	}
	write("p-1.hpcrun", []hpcrun.LoadModule{
		{ID: 1, Path: bin, Flags: 1},
		{ID: 2, Path: "/not/flagged.so", Flags: 0},
		{ID: 3, Path: "<vmlinux>", Flags: 1},
		{ID: 4, Path: "/x/logical/python", Flags: 1},
		{ID: 5, Path: "/gone/libgone.so", Flags: 1},
		{ID: 6, Path: "/old/meas/vdso/" + vdsoName, Flags: 1},
		{ID: 7, Path: empty, Flags: 1},
	})
	write("p-2.hpcrun", []hpcrun.LoadModule{{ID: 1, Path: bin, Flags: 1}, {ID: 2, Path: bin2, Flags: 1}})
	os.WriteFile(filepath.Join(dir, "p-3.hpcrun"), []byte("HPCRUN-profile____04.00b garbage"), 0o644)
	d, err := Read(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range d.Modules {
		got = append(got, filepath.Base(filepath.Dir(m.File))+"/"+filepath.Base(m.File)+">"+m.Out)
	}
	want := []string{"a/libsame.so>libsame.so.hpcstruct", "vdso/" + vdsoName + ">" + vdsoName + ".hpcstruct", "b/libsame.so>libsame.so-2.hpcstruct"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("modules %q, want %q", got, want)
	}
	if d.Modules[1].Path != "/old/meas/vdso/"+vdsoName {
		t.Errorf("the vdso keeps its recorded path for hpcprof: %q", d.Modules[1].Path)
	}
	if len(d.Skipped) != 2 || len(d.Warnings) != 1 {
		t.Errorf("skipped %v, warnings %v; want 2 skipped (gone, empty) and 1 warning (p-3)", d.Skipped, d.Warnings)
	}
	if _, err := Read(t.TempDir(), ""); err == nil {
		t.Error("a directory without profiles is accepted")
	}
}

// TestLocateSysroot: a module under the sysroot is read from there, even
// when this machine has a file at the recorded path (another build);
// otherwise the recorded path, then the vdso copy.
func TestLocateSysroot(t *testing.T) {
	dir, sysroot := t.TempDir(), t.TempDir()
	local := filepath.Join(t.TempDir(), "lib", "x.so") // exists here and under the sysroot
	only := filepath.Join(t.TempDir(), "y.so")         // exists here only
	for _, p := range []string{local, only, filepath.Join(sysroot, local), filepath.Join(sysroot, "/opt/app/z")} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	os.MkdirAll(filepath.Join(sysroot, "/opt/app/empty"), 0o755)
	tests := []struct {
		sysroot, path, want string
		ok                  bool
	}{
		{sysroot, local, filepath.Join(sysroot, local), true},
		{"", local, local, true},
		{sysroot, only, only, true},
		{sysroot, "/opt/app/z", filepath.Join(sysroot, "/opt/app/z"), true},
		{"", "/opt/app/z", "", false},
		{sysroot, "/opt/app/empty", "", false}, // a directory is no module
		{sysroot, "relative/z", "", false},
	}
	for _, tt := range tests {
		got, ok := Locate(dir, tt.sysroot, tt.path)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Locate(%q, %q) = %q, %v; want %q, %v", tt.sysroot, tt.path, got, ok, tt.want, tt.ok)
		}
	}
}
