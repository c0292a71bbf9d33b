package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"bloop/inputs"
	"bloop/internal/nginxtest"
	"bloop/internal/slurmtest"
	"bloop/internal/testenv"
)

// The job scripts of the README's Slurm section, which the test submits
// as they are.
const (
	arrayScript = "../../docs/slurm/array.sh"
	mergeScript = "../../docs/slurm/merge.sh"
	slurmShards = 4
)

// TestSlurmArray runs bloop struct as a job array of docs/slurm/array.sh
// on a real one-node Slurm cluster, the tasks sharing a remote cache on a
// real nginx: a job after the array (--dependency=afterok) runs
// docs/slurm/merge.sh and diffs the tree against an unsharded run; then a
// second array, cold again, has its slowest task killed mid-run
// (scancel --signal=KILL) and requeued (scontrol requeue), and its tree
// must come out complete and the same bytes. No timing is asserted; the
// waits are long for a loaded machine.
func TestSlurmArray(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Slurm cluster")
	}
	cl := slurmtest.Start(t)
	srv := nginxtest.Start(t)
	work, err := os.MkdirTemp("", "bloop-slurm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	os.Chmod(work, 0o755)
	bloop := buildBloop(t, work)
	tree := slurmTree(t, filepath.Join(work, "tree"))
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	array, merge := abs(arrayScript), abs(mergeScript)

	// No debuginfod: every run sees the same debug files, this machine's.
	t.Setenv("DEBUGINFOD_URLS", "")
	ref := filepath.Join(work, "ref")
	if out, err := exec.Command(bloop, "struct", "-q", "--nocache", "-o", ref, tree).CombinedOutput(); err != nil {
		t.Fatalf("unsharded run: %v\n%s", err, out)
	}
	env := func(run string) []string {
		return []string{"BLOOP=" + bloop, "TREE=" + tree, "OUT=" + filepath.Join(work, run),
			"CACHE_URL=" + srv.URL + "/" + run, "HPCTOOLKIT_HPCSTRUCT_CACHE=" + filepath.Join(work, run+"-cache")}
	}
	// Arrays may count from any index: the first from 1, the second from 0.
	arrayArgs := func(run string, first int) []string {
		os.MkdirAll(filepath.Join(work, run, "logs"), 0o755)
		return []string{fmt.Sprintf("--array=%d-%d", first, first+slurmShards-1), "-o", filepath.Join(work, run, "logs", "%a.out"), array}
	}

	// The array, and the job after it that merges and diffs.
	id := cl.Submit(env("run1"), arrayArgs("run1", 1)...)
	after := cl.Submit(env("run1"), "--dependency=afterok:"+id, "-o", filepath.Join(work, "run1", "logs", "merge.out"),
		"--wrap", fmt.Sprintf("sh %s && %s diff %s %s/structs", merge, bloop, ref, filepath.Join(work, "run1")))
	for _, tk := range cl.Wait(id, 10*time.Minute) {
		if tk.State != "COMPLETED" {
			t.Errorf("task %s of the array: %s (%s)\n%s", tk.ID, tk.State, tk.Reason, readLog(work, "run1", tk.ID))
		}
	}
	for _, tk := range cl.Wait(after, 10*time.Minute) {
		if tk.State != "COMPLETED" {
			t.Errorf("merge and diff job: %s (%s)\n%s", tk.State, tk.Reason, readLog(work, "run1", "merge"))
		}
	}
	checkMerged(t, filepath.Join(work, "run1"), tree)
	sameTree(t, ref, filepath.Join(work, "run1", "structs"))
	if hits := len(srv.AccessLog()); hits == 0 {
		t.Error("the tasks did not use the remote cache")
	}

	// The second array: its slowest task killed while bloop runs, then
	// requeued.
	shard, victimRels := slowestShard(t, tree)
	victim := fmt.Sprint(shard - 1) // the index of shard K in --array=0-3
	id = cl.Submit(env("run2"), arrayArgs("run2", 0)...)
	pid := waitBloop(t, id, victim, 10*time.Minute)
	// Mid-run: once the task has begun writing an output (its temporary
	// file is there), or has written one.
	structs := filepath.Join(work, "run2", "structs")
	for start := time.Now(); time.Since(start) < 5*time.Minute; time.Sleep(10 * time.Millisecond) {
		if len(leftovers(structs, victimRels)) > 0 || len(written(structs, victimRels)) > 0 {
			break
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			break
		}
	}
	t.Logf("killing task %s: %d of its %d outputs written, writing %q", victim,
		len(written(structs, victimRels)), len(victimRels), leftovers(structs, victimRels))
	cl.Run("scancel", "--signal=KILL", id+"_"+victim)
	killed := cl.Wait(id+"_"+victim, 5*time.Minute)
	// The task's state changes before its processes are gone.
	for start := time.Now(); time.Since(start) < 2*time.Minute; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			break
		}
	}
	// The other tasks are still writing theirs.
	left := leftovers(structs, victimRels)
	t.Logf("task %s (bloop pid %d) killed: %+v; files it left: %q", victim, pid, killed[0], left)
	switch {
	case killed[0].State == "COMPLETED":
		t.Logf("task %s ended before the kill reached it; the requeue runs it again all the same", victim)
	case killed[0].ExitCode == "143:0" && len(left) > 0:
		// Slurm cancels a job with SIGTERM first (then SIGKILL after
		// KillWait): bloop, ending on it, removes its temporary files.
		t.Errorf("bloop ended by SIGTERM left %q", left)
	}
	cl.Run("scontrol", "requeue", id+"_"+victim)
	// A requeued job waits about two minutes before it is eligible;
	// nothing here needs that wait.
	cl.Run("scontrol", "update", "JobId="+id+"_"+victim, "StartTime=now")
	// slurmctld takes the requeue in on its own time: until the task has
	// left the state the kill gave it, waiting for the array's end would
	// see that state (FAILED or CANCELLED) and stop at once.
	for start := time.Now(); time.Since(start) < 2*time.Minute; time.Sleep(100 * time.Millisecond) {
		if tks := cl.Tasks(id + "_" + victim); len(tks) > 0 && tks[0].State != "FAILED" && tks[0].State != "CANCELLED" {
			break
		}
	}
	for _, tk := range cl.Wait(id, 10*time.Minute) {
		if tk.State != "COMPLETED" {
			t.Errorf("task %s of the second array: %s (%s)\n%s", tk.ID, tk.State, tk.Reason, readLog(work, "run2", tk.ID))
		}
		if tk.ID == victim && tk.Restarts != "1" {
			t.Errorf("task %s restarted %s times, want 1", tk.ID, tk.Restarts)
		}
	}
	cmd := exec.Command("sh", merge)
	cmd.Env = append(os.Environ(), "OUT="+filepath.Join(work, "run2"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("merge.sh after the requeue: %v\n%s", err, out)
	}
	checkMerged(t, filepath.Join(work, "run2"), tree)
	sameTree(t, ref, filepath.Join(work, "run2", "structs"))
	if out, err := exec.Command(bloop, "diff", ref, filepath.Join(work, "run2", "structs")).CombinedOutput(); err != nil {
		t.Errorf("bloop diff after the requeue: %v\n%s", err, out)
	}
}

// buildBloop builds the command into dir, for the jobs to run, as the
// README installs it: static, without cgo.
func buildBloop(t *testing.T, dir string) string {
	t.Helper()
	goCmd := testenv.Need(t, "go")
	bin := filepath.Join(dir, "bloop")
	cmd := exec.Command(goCmd, "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// slurmTree is a small tree of inputs of very different costs: corpus
// programs and a few system libraries (the packages .ci/run installs).
func slurmTree(t *testing.T, dir string) string {
	t.Helper()
	progs := testenv.Fixtures(t, "../../testdata/bin/*-O2")
	for _, p := range progs {
		copyFile(t, p, filepath.Join(dir, "bin", filepath.Base(p)))
	}
	for lib, pkg := range map[string]string{"libz.so.1": "zlib1g", "libgomp.so.1": "libgomp1",
		"libgfortran.so.5": "libgfortran5", "libstdc++.so.6": "libstdc++6"} {
		p := testenv.NeedFile(t, "/usr/lib/x86_64-linux-gnu/"+lib, pkg)
		copyFile(t, p, filepath.Join(dir, "lib", lib))
	}
	return dir
}

// slowestShard is the shard of slurmShards whose inputs cost the most by
// the plan's own estimate (the task most surely still running when the
// test kills it), and its inputs' paths below the tree.
func slowestShard(t *testing.T, tree string) (int, map[string]bool) {
	set := inputs.Collect([]string{tree})
	a := inputs.Shard{K: 1, N: slurmShards}.Assign(set.Inputs, nil)
	load := make([]int64, slurmShards+1)
	for i, k := range a.Owner {
		load[k] += a.Cost[i]
	}
	best := 1
	for k := 2; k <= slurmShards; k++ {
		if load[k] > load[best] {
			best = k
		}
	}
	rels := map[string]bool{}
	for i, k := range a.Owner {
		if k == best {
			rels[set.Inputs[i].Rel] = true
		}
	}
	return best, rels
}

// waitBloop waits until task index of array job id runs bloop (the job
// script execs it), and returns its pid.
func waitBloop(t *testing.T, id, index string, timeout time.Duration) int {
	t.Helper()
	want := [][]byte{[]byte("SLURM_ARRAY_JOB_ID=" + id + "\x00"), []byte("SLURM_ARRAY_TASK_ID=" + index + "\x00")}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		procs, _ := filepath.Glob("/proc/[0-9]*")
		for _, p := range procs {
			comm, _ := os.ReadFile(p + "/comm")
			if strings.TrimSpace(string(comm)) != "bloop" {
				continue
			}
			env, _ := os.ReadFile(p + "/environ")
			if bytes.Contains(env, want[0]) && bytes.Contains(env, want[1]) {
				var pid int
				fmt.Sscan(filepath.Base(p), &pid)
				return pid
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("task %s_%s did not start bloop in %v", id, index, timeout)
	return 0
}

// checkMerged checks the merged manifest of a run lists every input of
// the tree once, written or from a cache.
func checkMerged(t *testing.T, run, tree string) {
	t.Helper()
	recs := readManifest(t, filepath.Join(run, "manifest.jsonl"))
	set := inputs.Collect([]string{tree})
	seen := map[string]int{}
	for _, r := range recs {
		seen[r.Rel]++
		if r.Outcome != "written" && r.Outcome != "cached" {
			t.Errorf("%s: %s: %s", run, r.Rel, r.Outcome)
		}
	}
	for _, in := range set.Inputs {
		if seen[in.Rel] != 1 {
			t.Errorf("%s: %s in %d records of the merged manifest", run, in.Rel, seen[in.Rel])
		}
	}
	if len(recs) != len(set.Inputs) {
		t.Errorf("%s: %d records for %d inputs", run, len(recs), len(set.Inputs))
	}
}

// sameTree checks that got holds the files of want, the same bytes, and
// nothing else (no temporary file of a killed task).
func sameTree(t *testing.T, want, got string) {
	t.Helper()
	files := func(root string) map[string][]byte {
		m := map[string][]byte{}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(root, p)
				m[rel], _ = os.ReadFile(p)
			}
			return nil
		})
		return m
	}
	w, g := files(want), files(got)
	var names []string
	for n := range w {
		names = append(names, n)
	}
	for n := range g {
		if _, ok := w[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(w) == 0 {
		t.Fatalf("%s is empty", want)
	}
	for _, n := range names {
		a, inW := w[n]
		b, inG := g[n]
		switch {
		case !inG:
			t.Errorf("%s missing from %s", n, got)
		case !inW:
			t.Errorf("%s: %s is not in the unsharded run's tree", got, n)
		case !bytes.Equal(a, b):
			t.Errorf("%s differs from the unsharded run's", filepath.Join(got, n))
		}
	}
}

// leftovers are the temporary files below dir of the outputs of the
// inputs rels (.NAME.hpcstruct.tmpNNN, atomicfile's names).
func leftovers(dir string, rels map[string]bool) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil // dir not made yet (d is nil then), or a directory
		}
		name, _, tmp := strings.Cut(d.Name(), ".hpcstruct.tmp")
		if !tmp || !strings.HasPrefix(name, ".") {
			return nil
		}
		rel, _ := filepath.Rel(dir, filepath.Join(filepath.Dir(p), name[1:]))
		if rels[filepath.ToSlash(rel)] {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// written are the outputs below dir of the inputs rels.
func written(dir string, rels map[string]bool) []string {
	var out []string
	for rel := range rels {
		if _, err := os.Stat(filepath.Join(dir, rel+".hpcstruct")); err == nil {
			out = append(out, rel)
		}
	}
	return out
}

// readLog is a task's output (index "merge" for the merge job).
func readLog(work, run, index string) string {
	b, _ := os.ReadFile(filepath.Join(work, run, "logs", index+".out"))
	return string(b)
}

// TestReadmeSlurmScript: the README's Slurm section shows the job
// script's lines as they are, so that what it shows is what
// TestSlurmArray runs.
func TestReadmeSlurmScript(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	script := testenv.Fixture(t, arrayScript)
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var shown []string
	for i, l := range lines {
		if strings.HasPrefix(l, "#SBATCH --array") || strings.HasPrefix(l, "#SBATCH --cpus") ||
			strings.HasPrefix(l, "#SBATCH --requeue") || strings.HasPrefix(l, "exec ") || i > 0 && strings.HasPrefix(lines[i-1], "exec ") {
			shown = append(shown, l)
		}
	}
	if want := strings.Join(shown, "\n"); len(shown) != 5 || !strings.Contains(string(readme), "```sh\n"+want+"\n```") {
		t.Errorf("README.md does not show %s's lines:\n%s", arrayScript, want)
	}
}

// TestMergeScript runs docs/slurm/merge.sh on the manifests of real
// shards, without Slurm: it joins them, and refuses a missing task, two
// plans and a failed input, in lines that say so.
func TestMergeScript(t *testing.T) {
	sh := testenv.Need(t, "sh")
	merge := testenv.Fixture(t, mergeScript)
	for _, v := range []string{"BLOOP_SHARD", "SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"} {
		t.Setenv(v, "")
	}
	tree := t.TempDir()
	for _, p := range testenv.Fixtures(t, "../../testdata/bin/loops-*-O2")[:2] {
		copyFile(t, p, filepath.Join(tree, filepath.Base(p)))
	}
	out := t.TempDir()
	shards := func(extra ...string) {
		for k := 1; k <= 2; k++ {
			args := append([]string{"-q", "--nocache", "-o", filepath.Join(out, "structs"),
				"--manifest", filepath.Join(out, fmt.Sprintf("manifest-%d.jsonl", k)), "--shard", fmt.Sprintf("%d/2", k)}, extra...)
			if code := runStruct(append(args, tree)); code != 0 {
				t.Fatalf("shard %d: exit %d", k, code)
			}
		}
	}
	run := func() (string, error) {
		cmd := exec.Command(sh, merge)
		cmd.Env = append(os.Environ(), "OUT="+out)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	shards()
	if msg, err := run(); err != nil || !strings.Contains(msg, "2 inputs from 2 shards") {
		t.Fatalf("merge: %v\n%s", err, msg)
	}
	if recs := readManifest(t, filepath.Join(out, "manifest.jsonl")); len(recs) != 2 {
		t.Errorf("merged manifest: %d records", len(recs))
	}
	// Task 2 ran with the other plan.
	args := []string{"-q", "--nocache", "-o", filepath.Join(out, "structs"), "--manifest", filepath.Join(out, "manifest-2.jsonl"),
		"--shard", "2/2", "--shard-plan", "path", tree}
	if code := runStruct(args); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if msg, err := run(); err == nil || !strings.Contains(msg, "did not split one list alike") {
		t.Errorf("two plans merged: %v\n%s", err, msg)
	}
	shards()
	os.Remove(filepath.Join(out, "manifest-2.jsonl"))
	if msg, err := run(); err == nil || !strings.Contains(msg, "1 manifests in") {
		t.Errorf("a missing task merged: %v\n%s", err, msg)
	}
	shards()
	m := filepath.Join(out, "manifest-1.jsonl")
	b, _ := os.ReadFile(m)
	os.WriteFile(m, []byte(strings.Replace(string(b), `"outcome":"written"`, `"outcome":"failed"`, 1)), 0o644)
	if msg, err := run(); err == nil || !strings.Contains(msg, "not written") {
		t.Errorf("a failed input merged: %v\n%s", err, msg)
	}
}
