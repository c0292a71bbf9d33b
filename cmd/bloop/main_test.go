package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const example = "../../testdata/bin/loops-gcc12-O2"

// TestStructBadInput checks that bad input gives exit 1 and leaves no file.
func TestStructBadInput(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "notelf")
	os.WriteFile(notELF, []byte("#!/bin/sh\necho hi\n"), 0o644)
	full, err := os.ReadFile(example)
	if err != nil {
		t.Fatal("testdata binary missing")
	}
	trunc := filepath.Join(dir, "trunc")
	os.WriteFile(trunc, full[:len(full)/3], 0o644)
	hdrOnly := filepath.Join(dir, "hdr")
	os.WriteFile(hdrOnly, full[:64], 0o644)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o644)
	for _, in := range []string{notELF, trunc, hdrOnly, empty, filepath.Join(dir, "missing")} {
		out := filepath.Join(dir, "out.hpcstruct")
		if code := runStruct([]string{"-o", out, in}); code != 1 {
			t.Errorf("%s: exit %d, want 1", in, code)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: a partial output file was left behind", in)
		}
	}
}

func TestStructAndDiff(t *testing.T) {
	if _, err := os.Stat(example); err != nil {
		t.Fatal("testdata binary missing")
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.hpcstruct"), filepath.Join(dir, "b.hpcstruct")
	if code := runStruct([]string{"-j1", "-o", a, example}); code != 0 {
		t.Fatalf("struct exit %d", code)
	}
	if code := runStruct([]string{"-j", "2", "-o", b, example}); code != 0 {
		t.Fatalf("struct exit %d", code)
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if string(da) != string(db) || !strings.Contains(string(da), "<L ") {
		t.Errorf("-j1 and -j2 differ, or no loop found")
	}
	if code := runDiff([]string{a, b}); code != 0 {
		t.Errorf("diff of identical files: exit %d, want 0", code)
	}
	other := filepath.Join(dir, "c.hpcstruct")
	if code := runStruct([]string{"-o", other, "../../testdata/bin/loops-clang14-O2"}); code != 0 {
		t.Fatalf("struct exit %d", code)
	}
	if code := runDiff([]string{a, other}); code != 1 {
		t.Errorf("diff of gcc vs clang: exit %d, want 1", code)
	}
	trunc := filepath.Join(dir, "t.hpcstruct")
	os.WriteFile(trunc, da[:len(da)/2], 0o644)
	if code := runDiff([]string{a, trunc}); code != 2 {
		t.Errorf("diff with a truncated file: exit %d, want 2", code)
	}
	js := filepath.Join(dir, "a.json")
	if code := runStruct([]string{"--format", "json", "-o", js, example}); code != 0 {
		t.Fatalf("json exit %d", code)
	}
}

// TestStructDevNull guards against replacing a device by the atomic rename.
func TestStructDevNull(t *testing.T) {
	if _, err := os.Stat(example); err != nil {
		t.Fatal("testdata binary missing")
	}
	if code := runStruct([]string{"-o", os.DevNull, example}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	st, err := os.Stat(os.DevNull)
	if err != nil || st.Mode()&os.ModeDevice == 0 {
		t.Fatalf("%s is no longer a device", os.DevNull)
	}
}
