package main

import (
	"bloop/internal/testenv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bigline has a call line and line rows past what the loader takes for
// plausible (a #line directive): two kinds of corrupt data.
const bigline = "../../loader/testdata/corrupt/bigline-gcc12-O2"

// TestStructReportsCorruptData: without -v one warning line sums up the
// corrupt data; -v gives a line per kind with its section and first
// offset. A clean binary gets neither.
func TestStructReportsCorruptData(t *testing.T) {
	testenv.Fixture(t, bigline)
	out := filepath.Join(t.TempDir(), "out.hpcstruct")
	code, _, stderr := captured(t, runStruct, "--nocache", "-o", out, bigline)
	want := "bloop: warning: " + bigline + ": corrupt data repaired or ignored (2 kinds, 6 places); the structure may be wrong there; -v lists them\n"
	if code != 0 || stderr != want {
		t.Errorf("exit %d, stderr %q; want 0 and %q", code, stderr, want)
	}
	code, _, stderr = captured(t, runStruct, "--nocache", "-v", "-o", out, bigline)
	for _, line := range []string{
		"bloop: " + bigline + ": corrupt data: call line out of range: 1 in .debug_info, first at offset 0x10d\n",
		"bloop: " + bigline + ": corrupt data: line number out of range: 5 in .debug_line, first at offset 0x0\n",
	} {
		if code != 0 || !strings.Contains(stderr, line) {
			t.Errorf("-v: exit %d, stderr %q; want a line %q", code, stderr, line)
		}
	}
	if strings.Contains(stderr, "warning") {
		t.Errorf("-v: stderr %q: the per-kind lines replace the warning", stderr)
	}
	for _, v := range []string{"", "-v"} {
		args := []string{"--nocache", "-o", out, example}
		if v != "" {
			args = append([]string{v}, args...)
		}
		if _, _, stderr := captured(t, runStruct, args...); strings.Contains(stderr, "corrupt") {
			t.Errorf("%s %s: stderr %q", v, example, stderr)
		}
	}
}

// TestCorruptDataFromCache: a structure file served from the cache
// comes with its input's corrupt-data report, so a pipeline that runs
// bloop on every build hears of a damaged binary every time.
func TestCorruptDataFromCache(t *testing.T) {
	testenv.Fixture(t, bigline)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.hpcstruct")
	cacheDir := filepath.Join(dir, "cache")
	_, _, miss := captured(t, runStruct, "-c", cacheDir, "-o", out, bigline)
	first, _ := os.ReadFile(out)
	_, _, hit := captured(t, runStruct, "-c", cacheDir, "-v", "-o", out, bigline)
	if !strings.Contains(hit, "structure file from the cache") {
		t.Fatalf("the second run did not use the cache: %q", hit)
	}
	if second, _ := os.ReadFile(out); string(second) != string(first) {
		t.Error("the cached file differs from the analysed one")
	}
	if !strings.Contains(miss, "corrupt data repaired or ignored") {
		t.Errorf("miss: %q", miss)
	}
	if want := "corrupt data: call line out of range: 1 in .debug_info, first at offset 0x10d\n"; !strings.Contains(hit, want) {
		t.Errorf("hit with -v: %q; want a line %q", hit, want)
	}
	_, _, hit = captured(t, runStruct, "-c", cacheDir, "-o", out, bigline)
	if hit != miss {
		t.Errorf("hit says %q, the analysing run %q", hit, miss)
	}
}
