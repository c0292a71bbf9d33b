package inputs

import (
	"errors"
	"fmt"
	"strconv"
)

// The environment --shard auto reads.
const (
	EnvShard      = "BLOOP_SHARD"       // K/N, as --shard takes it
	EnvShardCount = "BLOOP_SHARD_COUNT" // N, for a Kubernetes indexed Job
	envK8sIndex   = "JOB_COMPLETION_INDEX"
	envSlurmID    = "SLURM_ARRAY_TASK_ID"
	envSlurmMin   = "SLURM_ARRAY_TASK_MIN"
	envSlurmMax   = "SLURM_ARRAY_TASK_MAX"
	envSlurmCount = "SLURM_ARRAY_TASK_COUNT"
	envSlurmStep  = "SLURM_ARRAY_TASK_STEP"
)

// errNoEngine is --shard auto's error outside any engine it knows.
var errNoEngine = errors.New("--shard auto: none of " + EnvShard + "=K/N, " + envSlurmID +
	" (a Slurm job array) or " + envK8sIndex + " (a Kubernetes indexed Job, with " + EnvShardCount + "=N) is set")

// ShardFromEnv is --shard auto: K and N from the engine that started the
// task, read through getenv (os.Getenv). BLOOP_SHARD=K/N wins, as the
// one a user sets by hand; then a Slurm job array, whose task K is its
// place among the array's indices (which may start anywhere and have a
// step: --array=0-30:10 is 4 shards); then a Kubernetes indexed Job, whose
// 0-based JOB_COMPLETION_INDEX is shard index+1 of BLOOP_SHARD_COUNT
// (the Job's completions, which Kubernetes does not put in the pod's
// environment: set it in the pod template).
func ShardFromEnv(getenv func(string) string) (Shard, error) {
	if v := getenv(EnvShard); v != "" {
		s, err := ParseShard(v)
		if err != nil {
			return Shard{}, fmt.Errorf("%s=%s: want K/N with 1 <= K <= N", EnvShard, v)
		}
		return s, nil
	}
	if getenv(envSlurmID) != "" {
		return slurmShard(getenv)
	}
	if v := getenv(envK8sIndex); v != "" {
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 {
			return Shard{}, fmt.Errorf("--shard auto: %s=%q is not an index (0, 1, ...)", envK8sIndex, v)
		}
		c := getenv(EnvShardCount)
		n, err := strconv.Atoi(c)
		if c == "" || err != nil || n < 1 {
			return Shard{}, fmt.Errorf("--shard auto: %s=%d needs %s=N, the Job's completions (got %q)", envK8sIndex, i, EnvShardCount, c)
		}
		if i >= n {
			return Shard{}, fmt.Errorf("--shard auto: %s=%d is not below %s=%d", envK8sIndex, i, EnvShardCount, n)
		}
		return Shard{K: i + 1, N: n}, nil
	}
	return Shard{}, errNoEngine
}

// slurmShard is the task's place in a Slurm job array MIN-MAX[:STEP].
// An array given as a list (--array=1,3,10) is refused: Slurm tells a
// task only its own index, the bounds and the count, so the places of
// the others cannot be known.
func slurmShard(getenv func(string) string) (Shard, error) {
	num := func(name string, def int) (int, error) {
		v := getenv(name)
		if v == "" && def >= 0 {
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("--shard auto: %s=%q is not a number", name, v)
		}
		return n, nil
	}
	id, err := num(envSlurmID, -1)
	if err != nil {
		return Shard{}, err
	}
	lo, err := num(envSlurmMin, -1)
	if err != nil {
		return Shard{}, err
	}
	hi, err := num(envSlurmMax, -1)
	if err != nil {
		return Shard{}, err
	}
	step, err := num(envSlurmStep, 1)
	if err != nil || step < 1 {
		return Shard{}, fmt.Errorf("--shard auto: %s=%q is not a step", envSlurmStep, getenv(envSlurmStep))
	}
	if id < lo || id > hi || (id-lo)%step != 0 || (hi-lo)%step != 0 {
		return Shard{}, fmt.Errorf("--shard auto: Slurm array task %d is not in %d-%d:%d", id, lo, hi, step)
	}
	n := (hi-lo)/step + 1
	count, err := num(envSlurmCount, n)
	if err != nil {
		return Shard{}, err
	}
	if count != n {
		return Shard{}, fmt.Errorf("--shard auto: the Slurm array of %d tasks within %d-%d is not a range MIN-MAX[:STEP]; "+
			"submit --array=MIN-MAX[:STEP], or set %s=K/N", count, lo, hi, EnvShard)
	}
	return Shard{K: (id-lo)/step + 1, N: n}, nil
}
