package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records whether Skip or Fatal was
// called, so that Need's choice can be checked without ending the test.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Skipf(string, ...any)  { r.skipped = true; panic(r) }
func (r *recorder) Fatalf(string, ...any) { r.failed = true; panic(r) }
func (r *recorder) run(f func(testing.TB)) (out *recorder) {
	out = r
	defer func() {
		if v := recover(); v != nil && v != r {
			panic(v)
		}
	}()
	f(r)
	return
}

func TestMissingTool(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "present")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	absent := filepath.Join(dir, "absent")
	cases := []struct {
		name         string
		ci           string
		f            func(testing.TB)
		skip, failed bool
	}{
		{"tool, developer", "", func(tb testing.TB) { Need(tb, "bloop-no-such-tool") }, true, false},
		{"tool, CI", "1", func(tb testing.TB) { Need(tb, "bloop-no-such-tool") }, false, true},
		{"tool present, CI", "1", func(tb testing.TB) { Need(tb, "go") }, false, false},
		{"any, CI", "1", func(tb testing.TB) { NeedAny(tb, "bloop-no-such-tool", "go") }, false, false},
		{"any none, developer", "", func(tb testing.TB) { NeedAny(tb, "bloop-no-a", "bloop-no-b") }, true, false},
		{"file, developer", "", func(tb testing.TB) { NeedFile(tb, absent, "pkg") }, true, false},
		{"file, CI", "1", func(tb testing.TB) { NeedFile(tb, absent, "pkg") }, false, true},
		{"file present", "1", func(tb testing.TB) { NeedFile(tb, file, "pkg") }, false, false},
		{"fixture, developer", "", func(tb testing.TB) { Fixture(tb, absent) }, false, true},
		{"fixture present", "", func(tb testing.TB) { Fixture(tb, file) }, false, false},
		{"fixtures none", "", func(tb testing.TB) { Fixtures(tb, filepath.Join(dir, "*.none")) }, false, true},
		{"shared, developer", "", func(tb testing.TB) { Shared(tb, absent) }, true, false},
		{"shared, CI", "1", func(tb testing.TB) { Shared(tb, absent) }, false, true},
		{"shared glob, CI", "1", func(tb testing.TB) { SharedGlob(tb, filepath.Join(dir, "*.none")) }, false, true},
		{"capable, developer", "", func(tb testing.TB) { Capable(tb, "perf_event_open", os.ErrPermission) }, true, false},
		{"capable, CI", "1", func(tb testing.TB) { Capable(tb, "perf_event_open", os.ErrPermission) }, false, true},
		{"capable", "1", func(tb testing.TB) { Capable(tb, "perf_event_open", nil) }, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("BLOOP_CI", c.ci)
			r := (&recorder{TB: t}).run(c.f)
			if r.skipped != c.skip || r.failed != c.failed {
				t.Errorf("skipped %v, failed %v; want %v, %v", r.skipped, r.failed, c.skip, c.failed)
			}
		})
	}
}
