// Package testenv says, for tests, whether what a test needs is there,
// and what its absence means. On a developer's machine a missing tool or
// package is a reason to skip; under .ci/run (BLOOP_CI=1), which installs
// every tool and package the tests use, it is a failure, so that a test
// that silently stopped running shows up. Committed test data is never
// optional: its absence is always a failure.
package testenv

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// CI reports whether the tests run under .ci/run, which sets BLOOP_CI=1
// after installing what the tests need.
func CI() bool { return os.Getenv("BLOOP_CI") == "1" }

// Need returns the path of the command tool, found on $PATH (or tool
// itself when it is a path). Without it, t skips, or fails under CI.
func Need(t testing.TB, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		missing(t, "%s not installed: %v", tool, err)
	}
	return p
}

// NeedAny returns the first of tools found on $PATH, for a tool Debian
// installs under more than one name (clang-14 or clang). Without any,
// t skips, or fails under CI.
func NeedAny(t testing.TB, tools ...string) string {
	t.Helper()
	for _, tool := range tools {
		if p, err := exec.LookPath(tool); err == nil {
			return p
		}
	}
	missing(t, "none of %q installed", tools)
	return ""
}

// NeedFile returns path, a file that a package .ci/run installs (a
// -dbg package's debug file, a cross library); pkg names the package.
// Without it, t skips, or fails under CI.
func NeedFile(t testing.TB, path, pkg string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		missing(t, "%s missing (Debian package %s): %v", path, pkg, err)
	}
	return path
}

// Fixture returns path, a file or directory committed to the repository
// (testdata). Its absence is a broken checkout: t fails, always.
func Fixture(t testing.TB, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("committed test data missing: %v", err)
	}
	return path
}

// Fixtures returns the committed files that pattern matches, failing t
// when there are none.
func Fixtures(t testing.TB, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) == 0 {
		t.Fatalf("committed test data missing: no file matches %s (%v)", pattern, err)
	}
	return m
}

// Shared returns path, a file or directory of the reference corpus
// (../shared beside the repository). CI always has it, so there its
// absence fails t; a developer without it skips.
func Shared(t testing.TB, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		missing(t, "reference corpus missing: %v", err)
	}
	return path
}

// SharedGlob returns the reference files that pattern matches, with the
// absence of any treated as Shared treats a missing path.
func SharedGlob(t testing.TB, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) == 0 {
		missing(t, "reference corpus missing: no file matches %s (%v)", pattern, err)
	}
	return m
}

// Capable skips t when err says the machine cannot do what the test
// needs (perf_event_open refused, say), or fails it under CI, whose
// machine can.
func Capable(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		missing(t, "%s: %v", what, err)
	}
}

// Absent skips t, or fails it under CI, for something the test found
// missing by its own search (no reference of a kind in ../shared, no -dbg
// library installed).
func Absent(t testing.TB, format string, args ...any) {
	t.Helper()
	missing(t, format, args...)
}

// NeedLinux skips t off Linux: it needs the kernel's interfaces.

func NeedLinux(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skipf("needs Linux, not %s", runtime.GOOS)
	}
}

// missing skips t, or fails it under CI.
func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if CI() {
		t.Fatalf("BLOOP_CI=1: "+format, args...)
	}
	t.Skipf(format, args...)
}

// FreePort is a TCP port of 127.0.0.1 that nothing listened on a moment
// ago, for a server a test starts (nginx, debuginfod).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Warnings collects the lines a component under test warns, from any
// goroutine (the caches' and the debuginfod client's Warn hooks).
type Warnings struct {
	mu    sync.Mutex
	lines []string
}

// Add records one line; it is the hook to hand the component.
func (w *Warnings) Add(line string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, line)
}

// Lines returns a copy of the lines recorded so far.
func (w *Warnings) Lines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}
