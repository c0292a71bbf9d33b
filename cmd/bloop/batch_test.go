package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"bloop/internal/nginxtest"
	"bloop/internal/schematest"
	"bloop/schema"
	"bloop/structfile"
)

// batchTree is a build tree: three binaries of the corpus in
// subdirectories, a link to one of them, a script, and two files that
// start with the ELF magic but are not analysable (a truncated binary and
// a sparse 10 GB file).
func batchTree(t *testing.T) (root string, bins map[string]string) {
	t.Helper()
	root = t.TempDir()
	bins = map[string]string{
		"bin/loops":       "../../testdata/bin/loops-gcc12-O2",
		"lib/inline.so":   "../../testdata/bin/inline-clang14-O2",
		"lib/arm/tmpl-O2": "../../testdata/bin-arm64/tmpl-gcc12-O2",
	}
	for rel, src := range bins {
		copyFile(t, src, filepath.Join(root, rel))
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink("inline.so", filepath.Join(root, "lib/inline.so.1")))
	must(os.WriteFile(filepath.Join(root, "bin/run.sh"), []byte("#!/bin/sh\n"), 0o755))
	full, err := os.ReadFile(bins["bin/loops"])
	must(err)
	must(os.WriteFile(filepath.Join(root, "lib/trunc.so"), full[:200], 0o644))
	return root, bins
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("%s missing", src)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// readManifest checks a manifest against schema/manifest-v1.json and
// reads its records.
func readManifest(t *testing.T, path string) []structfile.Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := schematest.ValidateLines(schema.Manifest, data); err != nil {
		t.Errorf("%s: %v", path, err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []structfile.Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r structfile.Record
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("%s: %v in %s", path, err, sc.Text())
		}
		recs = append(recs, r)
	}
	return recs
}

// TestStructBatch runs bloop struct on a directory: every ELF file is
// written once under its path below the directory, byte-identical to a
// single-binary run; junk is refused in one line each and the exit status
// says so; the manifest describes every input; a second run copies from
// the cache and reports the same counts.
func TestStructBatch(t *testing.T) {
	root, bins := batchTree(t)
	out := filepath.Join(t.TempDir(), "out")
	cacheDir := t.TempDir()
	man := filepath.Join(t.TempDir(), "m.jsonl")
	code, _, errOut := captured(t, runStruct, "-c", cacheDir, "-o", out, "--manifest", man, root)
	if code != 1 {
		t.Fatalf("exit %d with a refused input, want 1; stderr %q", code, errOut)
	}
	if n := strings.Count(errOut, "trunc.so: "); n != 1 {
		t.Errorf("the refused input is named in %d lines, want 1: %q", n, errOut)
	}
	for rel, src := range bins {
		got, err := os.ReadFile(filepath.Join(out, rel+".hpcstruct"))
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(t.TempDir(), "want")
		if c := runStruct([]string{"-q", "--nocache", "-o", want, filepath.Join(root, rel)}); c != 0 {
			t.Fatalf("struct %s: exit %d", rel, c)
		}
		wb, _ := os.ReadFile(want)
		if !bytes.Equal(got, wb) {
			t.Errorf("%s: batch output differs from bloop struct %s (from %s)", rel, rel, src)
		}
	}
	var written []string
	filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(out, p)
			written = append(written, rel)
		}
		return nil
	})
	if want := []string{"bin/loops.hpcstruct", "lib/arm/tmpl-O2.hpcstruct", "lib/inline.so.hpcstruct"}; !reflect.DeepEqual(written, want) {
		t.Errorf("wrote %q, want %q (no file for the link, the script or the refused input)", written, want)
	}
	recs := readManifest(t, man)
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	byRel := map[string]structfile.Record{}
	for _, r := range recs {
		byRel[r.Rel] = r
	}
	if r := byRel["lib/trunc.so"]; r.Outcome != "refused" || r.Reason == "" || r.InputSHA256 != "" || r.Output != "" {
		t.Errorf("refused input: %+v", r)
	}
	for rel := range bins {
		r := byRel[rel]
		b, _ := os.ReadFile(r.Output)
		sum := sha256.Sum256(b)
		if r.Outcome != "written" || r.OutputSHA256 != hex.EncodeToString(sum[:]) || r.Procedures == nil || *r.Procedures == 0 || r.Loops == nil || len(r.InputSHA256) != 64 {
			t.Errorf("%s: %+v", rel, r)
		}
	}
	// Warm: from the cache, same bytes, same counts.
	before, _ := os.ReadFile(filepath.Join(out, "bin/loops.hpcstruct"))
	captured(t, runStruct, "-c", cacheDir, "-o", out, "--manifest", man, root)
	after, _ := os.ReadFile(filepath.Join(out, "bin/loops.hpcstruct"))
	if !bytes.Equal(before, after) {
		t.Error("the cached output differs")
	}
	for _, r := range readManifest(t, man) {
		old := byRel[r.Rel]
		if r.Outcome == "refused" {
			continue
		}
		if r.Outcome != "cached" || r.Cache != "local" || r.OutputSHA256 != old.OutputSHA256 || !reflect.DeepEqual(r.Procedures, old.Procedures) ||
			!reflect.DeepEqual(r.Loops, old.Loops) || !reflect.DeepEqual(r.Inlined, old.Inlined) {
			t.Errorf("warm %s: %+v, cold %+v", r.Rel, r, old)
		}
	}
}

// TestStructBatchJunkNotHashed checks that a file which only starts with
// the ELF magic is refused from its headers: with the cache on, it is
// never hashed (no hash memo is written for it), so a 10 GB sparse file
// costs nothing.
func TestStructBatchJunkNotHashed(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "huge")
	if err := os.WriteFile(junk, []byte("\x7fELF"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(junk, 10<<30); err != nil {
		t.Skip("no sparse files:", err)
	}
	copyFile(t, example, filepath.Join(dir, "good"))
	cacheDir := t.TempDir()
	code, _, errOut := captured(t, runStruct, "-c", cacheDir, "-o", t.TempDir(), junk, filepath.Join(dir, "good"))
	if code != 1 || !strings.Contains(errOut, junk+": unsupported ELF") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// The cache remembers each file it hashed with its size.
	memos, _ := filepath.Glob(filepath.Join(cacheDir, "*", "hash", "*"))
	if len(memos) == 0 {
		t.Fatal("no hash memo at all: the test no longer sees what the cache hashes")
	}
	for _, m := range memos {
		if b, _ := os.ReadFile(m); strings.Contains(string(b), fmt.Sprintf("size=%d ", 10<<30)) {
			t.Errorf("the junk file was hashed (%s)", m)
		}
	}
}

// TestStructBatchShards checks that the shards of a run are disjoint and
// together are the whole run, by either plan and with K and N from the
// environment (--shard auto): the union of their manifests is the
// unsharded manifest (but for times and the shard named) and the outputs
// are the same bytes.
func TestStructBatchShards(t *testing.T) {
	root := t.TempDir()
	names, _ := filepath.Glob("../../testdata/bin/*-gcc12-O2")
	if len(names) < 6 {
		t.Fatal("testdata binaries missing")
	}
	for _, n := range names[:6] {
		copyFile(t, n, filepath.Join(root, "sub", filepath.Base(n)))
	}
	for _, v := range []string{"BLOOP_SHARD", "SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"} {
		t.Setenv(v, "")
	}
	run := func(out string, extra ...string) []structfile.Record {
		man := filepath.Join(t.TempDir(), "m.jsonl")
		args := append([]string{"-q", "--nocache", "-o", out, "--manifest", man}, extra...)
		if code := runStruct(append(args, root)); code != 0 {
			t.Fatalf("%v: exit %d", extra, code)
		}
		recs := readManifest(t, man)
		for i := range recs {
			recs[i].WallSeconds = 0
			recs[i].Output, _ = filepath.Rel(out, recs[i].Output)
		}
		return recs
	}
	whole := t.TempDir()
	want := run(whole)
	sort.Slice(want, func(i, j int) bool { return want[i].Rel < want[j].Rel })
	for _, tc := range []struct {
		name string
		args func(k int) []string
	}{
		{"cost", func(k int) []string { return []string{"--shard", fmt.Sprintf("%d/3", k)} }},
		{"path", func(k int) []string { return []string{"--shard", fmt.Sprintf("%d/3", k), "--shard-plan", "path"} }},
		{"auto", func(k int) []string {
			t.Setenv("BLOOP_SHARD", fmt.Sprintf("%d/3", k))
			return []string{"--shard", "auto"}
		}},
	} {
		var union []structfile.Record
		shards := t.TempDir()
		var digests []string
		plan := tc.name
		if plan == "auto" {
			plan = "cost"
		}
		for k := 1; k <= 3; k++ {
			recs := run(shards, tc.args(k)...)
			for i, r := range recs {
				if r.Shard == nil || r.Shard.K != k || r.Shard.N != 3 || r.Shard.Plan != plan {
					t.Errorf("%s: shard %d: record names %+v", tc.name, k, r.Shard)
				} else {
					digests = append(digests, r.Shard.Digest)
				}
				recs[i].Shard = nil
			}
			union = append(union, recs...)
		}
		t.Setenv("BLOOP_SHARD", "")
		for _, d := range digests {
			if d != digests[0] {
				t.Errorf("%s: the shards' plans differ: %q", tc.name, digests)
				break
			}
		}
		sort.Slice(union, func(i, j int) bool { return union[i].Rel < union[j].Rel })
		if !reflect.DeepEqual(union, want) {
			t.Errorf("%s: shards' manifests %+v\nwhole run's %+v", tc.name, union, want)
		}
		for _, r := range want {
			a, _ := os.ReadFile(filepath.Join(whole, r.Output))
			b, _ := os.ReadFile(filepath.Join(shards, r.Output))
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Errorf("%s: %s differs between the shards and the whole run", tc.name, r.Output)
			}
		}
	}
}

// TestStructBatchOperands covers --files-from (a file and stdin), names
// that would collide, and the usage errors.
func TestStructBatchOperands(t *testing.T) {
	for _, v := range []string{"BLOOP_SHARD", "SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"} {
		t.Setenv(v, "")
	}
	root := t.TempDir()
	a := filepath.Join(root, "a", "prog")
	b := filepath.Join(root, "b", "prog")
	copyFile(t, "../../testdata/bin/loops-gcc12-O2", a)
	copyFile(t, "../../testdata/bin/loops-clang14-O2", b)
	list := filepath.Join(root, "list")
	os.WriteFile(list, []byte(a+"\n\n"+b+"\n"), 0o644)
	out := t.TempDir()
	if code, _, e := captured(t, runStruct, "-q", "--nocache", "-o", out, "--files-from", list); code != 0 {
		t.Fatalf("--files-from: exit %d %q", code, e)
	}
	ents, _ := os.ReadDir(out)
	if len(ents) != 2 || !strings.HasPrefix(ents[0].Name(), "prog@") || !strings.HasPrefix(ents[1].Name(), "prog@") {
		t.Errorf("two inputs named prog: wrote %v", ents)
	}
	// Stdin, and the same names on a rerun.
	saved := os.Stdin
	f, _ := os.Open(list)
	os.Stdin = f
	code, _, _ := captured(t, runStruct, "-q", "--nocache", "-o", out, "--files-from", "-")
	os.Stdin = saved
	f.Close()
	again, _ := os.ReadDir(out)
	if code != 0 || !reflect.DeepEqual(ents, again) {
		t.Errorf("--files-from -: exit %d, wrote %v then %v", code, ents, again)
	}
	for _, args := range [][]string{
		{"-o", "-", a, b},
		{"-o", list, a, b}, // a file, not a directory
		{"--shard", "4/3", a},
		{"--shard", "x", a},
		{"--shard", "auto", a}, // no engine in the environment
		{"--shard", "1/2", "--shard-plan", "size", a},
		{"--files-from", filepath.Join(root, "missing")},
		{"-M", root, a, b},
	} {
		if code, _, e := captured(t, runStruct, args...); code != 2 || strings.Count(e, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, e)
		}
	}
}

// TestStructBatchWithMeasurements: a measurement directory among the
// operands of a batch gets its structs directory, as alone, and its
// modules are records of the manifest.
func TestStructBatchWithMeasurements(t *testing.T) {
	dir, _ := measDir(t)
	out := t.TempDir()
	man := filepath.Join(t.TempDir(), "m.jsonl")
	if code, _, e := captured(t, runStruct, "-q", "--nocache", "-o", out, "--manifest", man, dir, example); code != 0 {
		t.Fatalf("exit %d: %q", code, e)
	}
	for _, p := range []string{filepath.Join(dir, "structs", "prog.hpcstruct"), filepath.Join(dir, "structs", "libm.so.6.hpcstruct"), filepath.Join(out, "loops-gcc12-O2.hpcstruct")} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	if recs := readManifest(t, man); len(recs) != 3 {
		t.Errorf("%d records, want 3 (two modules and the binary)", len(recs))
	}
}

// TestStructBatchRemote: a batch on one machine fills a real nginx; a
// batch on another (a fresh local cache) takes every file from it, with
// the same bytes and the same manifest but for the outcome.
func TestStructBatchRemote(t *testing.T) {
	srv := nginxtest.Start(t)
	root, _ := batchTree(t)
	os.Remove(filepath.Join(root, "lib/trunc.so"))
	url := srv.URL + "/farm"
	run := func(name string) (string, []structfile.Record) {
		out := filepath.Join(t.TempDir(), name)
		man := filepath.Join(t.TempDir(), "m.jsonl")
		code, _, e := captured(t, runStruct, "-c", t.TempDir(), "--cache-url", url, "-o", out, "--manifest", man, root)
		if code != 0 || strings.Contains(e, "warning") {
			t.Fatalf("%s: exit %d, stderr %q", name, code, e)
		}
		return out, readManifest(t, man)
	}
	out1, m1 := run("first")
	out2, m2 := run("second")
	if len(m2) != 3 {
		t.Fatalf("%d records", len(m2))
	}
	for i, r := range m2 {
		if r.Outcome != "cached" || r.Cache != "remote" {
			t.Errorf("%s: outcome %s from %q, want cached from remote", r.Rel, r.Outcome, r.Cache)
		}
		w := m1[i]
		if w.Outcome != "written" || w.OutputSHA256 != r.OutputSHA256 || !reflect.DeepEqual(w.Loops, r.Loops) || !reflect.DeepEqual(w.Problems, r.Problems) {
			t.Errorf("%s: first %+v, second %+v", r.Rel, w, r)
		}
		a, _ := os.ReadFile(filepath.Join(out1, r.Rel+".hpcstruct"))
		b, _ := os.ReadFile(filepath.Join(out2, r.Rel+".hpcstruct"))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: the remote hit differs from the analysis", r.Rel)
		}
	}
}
