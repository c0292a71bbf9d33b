package structfile

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"bloop/atomicfile"
	"bloop/cache"
	"bloop/loader"
	"bloop/par"
)

// Job is one structure file to write.
type Job struct {
	Bin  string  // the file read
	Dest string  // the file written; "-" is standard output
	Opt  Options // ModulePath is set for a measurement's modules
	// Path, Operand and Rel say where the input came from, for the
	// manifest (see package inputs); Path defaults to Bin.
	Path, Operand, Rel string
	// Sums asks for the SHA-256 of the input and of the file written (a
	// manifest's): without the cache, hashing the input reads it again.
	Sums bool
}

// Outcome is what became of a job.
type Outcome struct {
	Result *Result // nil when refused or failed before analysis
	Err    error
	// Refused is set when the input's headers were refused (loader.Check):
	// nothing past them was read or hashed.
	Refused   bool
	InputSum  string // SHA-256 of the input, hex; "" when refused or not asked for
	OutputSum string // SHA-256 of the file written, hex; "" unless written and asked for
	Wall      time.Duration
}

// Written reports whether the job's file was written (analysed or copied
// from the cache).
func (o *Outcome) Written() bool { return o.Err == nil }

// Run does jobs on up to workers at once, largest input first, so that
// the longest analysis starts at once and the small ones fill in around
// it; each analysis shares the threads of the process (GOMAXPROCS) with
// the others. At most workers images are in memory at once. done, when
// not nil, is called as each job ends (from several goroutines, never at
// once). A job's failure is its own: the others are still done.
func Run(c *cache.Cache, jobs []Job, workers int, done func(i int, o *Outcome)) []Outcome {
	out := make([]Outcome, len(jobs))
	order := bySize(jobs)
	var mu sync.Mutex
	par.For(workers, len(jobs), func(k int) {
		i := order[k]
		out[i] = runJob(c, jobs[i])
		if done != nil {
			mu.Lock()
			done(i, &out[i])
			mu.Unlock()
		}
	})
	return out
}

// bySize orders job indices largest input first; equal sizes keep their
// order.
func bySize(jobs []Job) []int {
	size := make([]int64, len(jobs))
	order := make([]int, len(jobs))
	for i, j := range jobs {
		order[i] = i
		if st, err := os.Stat(j.Bin); err == nil {
			size[i] = st.Size()
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return size[order[a]] > size[order[b]] })
	return order
}

// runJob checks the input's headers before anything hashes it, then
// writes its structure file atomically (a failure leaves no file).
func runJob(c *cache.Cache, j Job) (o Outcome) {
	t0 := time.Now()
	defer func() { o.Wall = time.Since(t0) }()
	if err := loader.Check(j.Bin); err != nil {
		return Outcome{Err: err, Refused: true}
	}
	h := sha256.New()
	err := writeDest(j.Dest, func(w io.Writer) error {
		if j.Sums {
			w = io.MultiWriter(w, h)
		}
		var err error
		o.Result, err = Cached(c, j.Bin, j.Opt, w)
		return err
	})
	if err != nil {
		o.Err = err
		return o
	}
	if j.Sums {
		o.OutputSum = hex.EncodeToString(h.Sum(nil))
		o.InputSum, _ = inputSum(c, j.Bin)
	}
	return o
}

// inputSum is the input's SHA-256, remembered by the cache when there is
// one (it hashed the input for its key).
func inputSum(c *cache.Cache, bin string) (string, error) {
	if c != nil {
		return c.FileHash(bin)
	}
	return cache.HashFile(bin)
}

// writeDest writes dest through write, atomically; "-" is stdout.
func writeDest(dest string, write func(io.Writer) error) error {
	if dest == "-" {
		return write(os.Stdout)
	}
	return atomicfile.Write(dest, write)
}
