package loader

import (
	"slices"
	"testing"
)

// TestSysrootDebugDirs: the sysroot's debug root comes last, after the
// user's roots, and the caller's slice is not written through.
func TestSysrootDebugDirs(t *testing.T) {
	dirs := make([]string, 1, 4)
	dirs[0] = "/d"
	got := SysrootDebugDirs(dirs, "/sys")
	if want := []string{"/d", "/sys/usr/lib/debug"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if other := append(dirs, "/e"); got[1] != "/sys/usr/lib/debug" || other[1] != "/e" {
		t.Errorf("the result shares the caller's array: %q, %q", got, other)
	}
	if got := SysrootDebugDirs(dirs, ""); !slices.Equal(got, dirs) {
		t.Errorf("no sysroot: %q, want %q", got, dirs)
	}
}
