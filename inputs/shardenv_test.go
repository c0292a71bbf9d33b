package inputs

import (
	"strings"
	"testing"
)

func TestShardFromEnv(t *testing.T) {
	slurm := func(id, lo, hi, count, step string) map[string]string {
		m := map[string]string{"SLURM_ARRAY_TASK_ID": id, "SLURM_ARRAY_TASK_MIN": lo, "SLURM_ARRAY_TASK_MAX": hi,
			"SLURM_ARRAY_TASK_COUNT": count, "SLURM_JOB_ID": "77"}
		if step != "" {
			m["SLURM_ARRAY_TASK_STEP"] = step
		}
		return m
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Shard
		err  string // a part of the error, "" for none
	}{
		{"plain", map[string]string{"BLOOP_SHARD": "2/5"}, Shard{K: 2, N: 5}, ""},
		{"plain bad", map[string]string{"BLOOP_SHARD": "6/5"}, Shard{}, "BLOOP_SHARD=6/5"},
		{"plain wins", map[string]string{"BLOOP_SHARD": "1/2", "SLURM_ARRAY_TASK_ID": "3", "JOB_COMPLETION_INDEX": "0"}, Shard{K: 1, N: 2}, ""},
		{"slurm from 1", slurm("1", "1", "8", "8", "1"), Shard{K: 1, N: 8}, ""},
		{"slurm from 1, last", slurm("8", "1", "8", "8", "1"), Shard{K: 8, N: 8}, ""},
		{"slurm from 0", slurm("0", "0", "3", "4", "1"), Shard{K: 1, N: 4}, ""},
		{"slurm from 10", slurm("12", "10", "13", "4", ""), Shard{K: 3, N: 4}, ""},
		{"slurm step", slurm("20", "0", "30", "4", "10"), Shard{K: 3, N: 4}, ""},
		{"slurm one task", slurm("5", "5", "5", "1", "1"), Shard{K: 1, N: 1}, ""},
		{"slurm no count", slurm("2", "1", "3", "", "1"), Shard{K: 2, N: 3}, ""},
		{"slurm list", slurm("3", "1", "10", "3", "1"), Shard{}, "not a range MIN-MAX[:STEP]"},
		{"slurm off step", slurm("5", "0", "30", "4", "10"), Shard{}, "not in 0-30:10"},
		{"slurm out of range", slurm("9", "1", "8", "8", "1"), Shard{}, "not in 1-8:1"},
		{"slurm no bounds", map[string]string{"SLURM_ARRAY_TASK_ID": "1"}, Shard{}, "SLURM_ARRAY_TASK_MIN"},
		{"slurm junk", slurm("x", "1", "8", "8", "1"), Shard{}, `SLURM_ARRAY_TASK_ID="x"`},
		{"slurm zero step", slurm("1", "1", "8", "8", "0"), Shard{}, "not a step"},
		{"k8s", map[string]string{"JOB_COMPLETION_INDEX": "0", "BLOOP_SHARD_COUNT": "3"}, Shard{K: 1, N: 3}, ""},
		{"k8s last", map[string]string{"JOB_COMPLETION_INDEX": "2", "BLOOP_SHARD_COUNT": "3"}, Shard{K: 3, N: 3}, ""},
		{"k8s no count", map[string]string{"JOB_COMPLETION_INDEX": "2"}, Shard{}, "needs BLOOP_SHARD_COUNT=N"},
		{"k8s past count", map[string]string{"JOB_COMPLETION_INDEX": "3", "BLOOP_SHARD_COUNT": "3"}, Shard{}, "not below"},
		{"k8s junk", map[string]string{"JOB_COMPLETION_INDEX": "-1", "BLOOP_SHARD_COUNT": "3"}, Shard{}, "not an index"},
		{"none", map[string]string{"SLURM_JOB_ID": "5", "HOME": "/root"}, Shard{}, "none of BLOOP_SHARD=K/N, SLURM_ARRAY_TASK_ID"},
	} {
		got, err := ShardFromEnv(func(k string) string { return tc.env[k] })
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.err)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: error of several lines: %q", tc.name, err)
		case got != tc.want:
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
