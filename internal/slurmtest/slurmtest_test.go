package slurmtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCluster starts a cluster and runs a job array on it, whose tasks
// see the variables --shard auto reads.
func TestCluster(t *testing.T) {
	c := Start(t)
	out := t.TempDir()
	os.Chmod(out, 0o755)
	script := filepath.Join(out, "task.sh")
	os.WriteFile(script, []byte("#!/bin/sh\necho $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_MIN $SLURM_ARRAY_TASK_MAX $SLURM_ARRAY_TASK_COUNT\n"), 0o755)
	id := c.Submit(nil, "--array=0-2", "-o", filepath.Join(out, "%a.txt"), script)
	for _, tk := range c.Wait(id, 5*time.Minute) {
		if tk.State != "COMPLETED" {
			t.Errorf("task %s: %s (%s)", tk.ID, tk.State, tk.Reason)
		}
	}
	for _, want := range []string{"0 0 2 3", "1 0 2 3", "2 0 2 3"} {
		b, err := os.ReadFile(filepath.Join(out, want[:1]+".txt"))
		if err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("task %s wrote %q (%v), want %q", want[:1], b, err, want)
		}
	}
}
