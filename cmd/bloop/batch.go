package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"bloop/atomicfile"
	"bloop/cache"
	"bloop/inputs"
	"bloop/progress"
	"bloop/structfile"
)

// batch is a run over many inputs: the jobs, and the inputs that gave no
// job (a measurement directory that could not be read).
type batch struct {
	jobs   []structfile.Job
	failed []structfile.Record
	shard  *structfile.ShardInfo // nil when not sharded
}

// structBatch writes the structure files of several inputs: binaries to
// -o DIR (default the current directory) under the names inputs.OutputNames
// gives, measurement directories' modules to their structs directories.
// One pool does them all; a refused or failed input is one line and the
// others go on. Exit 0 when every input was written, 1 otherwise.
func structBatch(f *structFlags, opt structfile.Options, set *inputs.Set, shard *inputs.Shard) int {
	t0 := time.Now()
	outDir := *f.out
	if outDir == "" {
		outDir = "."
	}
	if outDir == "-" {
		fmt.Fprintln(os.Stderr, "bloop struct: -o - writes one structure file; with several inputs -o names a directory")
		return 2
	}
	if st, err := os.Stat(outDir); err == nil && !st.IsDir() {
		fmt.Fprintf(os.Stderr, "bloop struct: -o %s: with several inputs -o names a directory, and this is a file\n", outDir)
		return 2
	}
	for _, w := range set.Warnings {
		fmt.Fprintf(os.Stderr, "bloop: warning: %s\n", w)
	}
	for _, in := range set.Inputs {
		if in.Kind == inputs.Measurements && (opt.JSON || opt.Writer != nil) {
			fmt.Fprintf(os.Stderr, "bloop struct: hpcprof reads the XML format: --format %s cannot be used with measurement directory %s\n", *f.format, in.Path)
			return 2
		}
	}
	b := makeBatch(opt, set, shard, outDir, *f.sysroot)
	c := f.openCache()
	bar := progress.Start("bloop", *f.quiet)
	var done, bad atomic.Int32
	total := len(b.jobs)
	bar.Phase(batchPhase(0, total, 0), 0)
	outs := f.runJobs(c, b.jobs, workersFor(f), func(_ int, o *structfile.Outcome) {
		if !o.Written() {
			bad.Add(1)
		}
		bar.Phase(batchPhase(int(done.Add(1)), total, int(bad.Load())), 0)
	})
	bar.Close()
	code := reportBatch(f, b, outs)
	if err := writeManifest(f, b, outs); err != nil {
		fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
		code = 1
	}
	if !*f.quiet {
		fmt.Fprintf(os.Stderr, "bloop: %s in %.1fs%s%s\n", batchSummary(b, outs), time.Since(t0).Seconds(), setSummary(set), remoteSummary(c))
	}
	if *f.timing {
		fmt.Fprintf(os.Stderr, "peak RSS  %8.1f MiB\n", peakRSSMiB())
	}
	return code
}

func batchPhase(done, total, bad int) string {
	s := fmt.Sprintf("files %d/%d", done, total)
	if bad > 0 {
		s += fmt.Sprintf(", %d failed", bad)
	}
	return s
}

// makeBatch turns the inputs of shard (nil: all) into jobs. Output
// names are made from every input, before sharding, so that a shard
// writes what the whole run would; so is the shard plan, so that every
// task of a split deals the same list alike.
func makeBatch(opt structfile.Options, set *inputs.Set, shard *inputs.Shard, outDir, sysroot string) *batch {
	names := inputs.OutputNames(set.Inputs, outputExt(opt))
	b := &batch{}
	var plan inputs.Assignment
	if shard != nil {
		plan = shard.Assign(set.Inputs, opt.Load.DebugDirs)
		b.shard = &structfile.ShardInfo{K: shard.K, N: shard.N, Plan: plan.Plan, Digest: plan.Digest}
	}
	for i, in := range set.Inputs {
		if shard != nil && !shard.Holds(plan, i) {
			continue
		}
		if in.Kind == inputs.Measurements {
			out, ext := measOutput(opt, in.Path)
			_, jobs, err := measurementJobs(opt, in.Path, sysroot, out, ext)
			if err != nil {
				b.failed = append(b.failed, structfile.Record{Version: structfile.ManifestVersion, Path: in.Path,
					Operand: in.Operand, Rel: in.Rel, Outcome: structfile.OutcomeFailed, Reason: err.Error()})
				continue
			}
			b.jobs = append(b.jobs, jobs...)
			continue
		}
		dest := filepath.Join(outDir, names[i])
		b.jobs = append(b.jobs, structfile.Job{Bin: in.Path, Dest: dest, Opt: opt, Path: in.Path, Operand: in.Operand, Rel: in.Rel})
		// A directory that cannot be made fails the job when it writes.
		os.MkdirAll(filepath.Dir(dest), 0o755)
	}
	return b
}

// reportBatch prints one line per refused or failed input and the
// warnings of the others (under -v, one line per file written), and
// returns the exit status.
func reportBatch(f *structFlags, b *batch, outs []structfile.Outcome) int {
	code := 0
	for _, r := range b.failed {
		fmt.Fprintf(os.Stderr, "bloop: %s\n", r.Reason)
		code = 1
	}
	for i, o := range outs {
		j := b.jobs[i]
		if o.Err != nil {
			fmt.Fprintf(os.Stderr, "bloop: %v\n", o.Err)
			code = 1
			continue
		}
		reportResult(f, j.Bin, o.Result, j.Opt.Pipeline)
		if *f.verbose {
			fmt.Fprintf(os.Stderr, "bloop: %s -> %s (%s)\n", j.Path, j.Dest, howWritten(&o, true))
		}
	}
	return code
}

// howWritten says how a file came to be: its analysis's procedures and
// time, or which cache it came from (tier: name the tier).
func howWritten(o *structfile.Outcome, tier bool) string {
	switch {
	case !o.Result.Cached:
		return fmt.Sprintf("%d procedures, %.1fs", o.Result.NumProcs, o.Wall.Seconds())
	case tier:
		return "from the " + o.Result.CacheTier + " cache"
	}
	return "from the cache"
}

// batchSummary counts the outcomes: "12 inputs: 9 written, 1 from the
// cache, 1 refused, 1 failed".
func batchSummary(b *batch, outs []structfile.Outcome) string {
	var written, cached, refused, failed int
	failed = len(b.failed)
	for _, o := range outs {
		switch {
		case o.Refused:
			refused++
		case o.Err != nil:
			failed++
		case o.Result.Cached:
			cached++
		default:
			written++
		}
	}
	return fmt.Sprintf("%s: %d written, %d from the cache, %d refused, %d failed",
		plural(len(outs)+len(b.failed), "input"), written, cached, refused, failed)
}

// remoteSummary says what the remote cache tier did, "" without one.
func remoteSummary(c *cache.Cache) string {
	u := c.RemoteURL()
	if u == "" {
		return ""
	}
	st := c.RemoteStats()
	s := fmt.Sprintf("; remote cache %s: %d hits, %d uploaded", u, st.Hits, st.Uploads)
	if st.Bad > 0 {
		s += fmt.Sprintf(", %d refused as damaged", st.Bad)
	}
	if st.Off {
		s += ", turned off after failures"
	}
	return s
}

// setSummary says what the walk left out.
func setSummary(s *inputs.Set) string {
	var parts []string
	if s.Ignored > 0 {
		parts = append(parts, plural(s.Ignored, "file")+" not ELF")
	}
	if s.Duplicates > 0 {
		parts = append(parts, plural(s.Duplicates, "other path")+" of the same files")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (left out: " + strings.Join(parts, ", ") + ")"
}

// runJobs does jobs on structfile.Run's pool, with the hashes a manifest
// records only when one is asked for.
func (f *structFlags) runJobs(c *cache.Cache, jobs []structfile.Job, workers int, done func(int, *structfile.Outcome)) []structfile.Outcome {
	for i := range jobs {
		jobs[i].Sums = *f.manifest != ""
	}
	return structfile.Run(c, jobs, workers, done)
}

// writeManifest writes --manifest's JSON Lines: a record per job, in
// input order, then the inputs that gave no job; each names the shard.
func writeManifest(f *structFlags, b *batch, outs []structfile.Outcome) error {
	if *f.manifest == "" {
		return nil
	}
	recs := make([]structfile.Record, 0, len(b.jobs)+len(b.failed))
	for i := range b.jobs {
		recs = append(recs, structfile.NewRecord(b.jobs[i], &outs[i]))
	}
	recs = append(recs, b.failed...)
	for i := range recs {
		recs[i].Shard = b.shard
	}
	write := func(w io.Writer) error { return structfile.WriteManifest(w, recs) }
	var err error
	if *f.manifest == "-" {
		err = write(os.Stdout)
	} else {
		err = atomicfile.Write(*f.manifest, write)
	}
	if err != nil {
		return fmt.Errorf("manifest %s: %w", *f.manifest, err)
	}
	return nil
}

// parseShard reads --shard (K/N, or auto: from the environment) and
// --shard-plan; nil when the run is not sharded.
func (f *structFlags) parseShard() (*inputs.Shard, error) {
	plan, err := inputs.ParsePlan(*f.shardPlan)
	if err != nil {
		return nil, err
	}
	if *f.shard == "" {
		return nil, nil
	}
	var s inputs.Shard
	if *f.shard == "auto" {
		s, err = inputs.ShardFromEnv(os.Getenv)
	} else {
		s, err = inputs.ParseShard(*f.shard)
	}
	if err != nil {
		return nil, err
	}
	s.Plan = plan
	return &s, nil
}
