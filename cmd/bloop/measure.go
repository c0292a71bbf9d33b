package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"time"

	"bloop/meas"
	"bloop/par"
	"bloop/progress"
	"bloop/structfile"
)

// maxModulesAtOnce bounds how many modules are loaded at once: each holds
// its image in memory, and the procedures of a few keep every core busy.
const maxModulesAtOnce = 4

// moduleRun is one module's outcome.
type moduleRun struct {
	mod meas.Module
	res *structfile.Result
	err error
	dur time.Duration
}

// structMeasurements analyses the load modules an hpcrun measurement
// directory flagged and writes DIR/structs/<name>.hpcstruct for hpcprof.
// Modules are analysed at once, largest first, their procedures sharing
// the -j threads; the report lists them in load-map order.
func structMeasurements(f *structFlags, opt structfile.Options, dir string) int {
	d, err := meas.Read(dir)
	if err != nil {
		if !meas.IsMeasurementDir(dir) {
			err = fmt.Errorf("%s is a directory but not an hpcrun measurement directory (no .hpcrun profiles in it)", dir)
		}
		fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
		return 1
	}
	if *f.out != "" {
		fmt.Fprintf(os.Stderr, "bloop struct: -o names one file; the structure files of measurement directory %s go to %s\n", dir, meas.StructsDir(dir))
		return 2
	}
	if opt.JSON {
		fmt.Fprintf(os.Stderr, "bloop struct: hpcprof reads the XML format: --format json is for single binaries\n")
		return 2
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(os.Stderr, "bloop: warning: %s\n", w)
	}
	structs := meas.StructsDir(dir)
	if err := os.MkdirAll(structs, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
		return 1
	}
	runs := make([]moduleRun, len(d.Modules))
	order := bySizeDescending(d.Modules)
	c := f.openCache()
	bar := progress.Start("bloop: "+filepath.Base(dir), *f.quiet)
	var finished atomic.Int32
	bar.Phase(fmt.Sprintf("modules 0/%d", len(runs)), 0)
	workers := maxModulesAtOnce
	if *f.jobs > 0 {
		workers = min(*f.jobs, maxModulesAtOnce)
	}
	par.For(workers, len(order), func(k int) {
		i := order[k]
		m := d.Modules[i]
		o := opt
		o.ModulePath = m.Path
		t0 := time.Now()
		var r *structfile.Result
		err := writeAtomic(filepath.Join(structs, m.Out), func(w io.Writer) error {
			var err error
			r, err = structfile.Cached(c, m.File, o, w)
			return err
		})
		runs[i] = moduleRun{mod: m, res: r, err: err, dur: time.Since(t0)}
		n := finished.Add(1)
		bar.Phase(fmt.Sprintf("modules %d/%d", n, len(runs)), 0)
	})
	bar.Close()
	return reportModules(f, d, runs)
}

// bySizeDescending orders module indices largest file first, so that the
// longest analysis starts at once and the small ones fill in around it.
func bySizeDescending(ms []meas.Module) []int {
	size := make([]int64, len(ms))
	order := make([]int, len(ms))
	for i, m := range ms {
		order[i] = i
		if st, err := os.Stat(m.File); err == nil {
			size[i] = st.Size()
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return size[order[a]] > size[order[b]] })
	return order
}

// reportModules prints one line per module, skipped ones included, and
// returns 1 if any analysis failed. Missing modules are warnings: hpcprof
// still uses the others.
func reportModules(f *structFlags, d *meas.Dir, runs []moduleRun) int {
	code := 0
	for _, s := range d.Skipped {
		fmt.Fprintf(os.Stderr, "bloop: %s: skipped %s: %s\n", d.Path, s.Path, s.Reason)
	}
	for _, r := range runs {
		out := filepath.Join(meas.StructsDir(d.Path), r.mod.Out)
		if r.err != nil {
			fmt.Fprintf(os.Stderr, "bloop: %v\n", r.err)
			code = 1
			continue
		}
		reportResult(f, r.mod.File, r.res)
		if *f.quiet {
			continue
		}
		how := fmt.Sprintf("%d procedures, %.1fs", r.res.NumProcs, r.dur.Seconds())
		if r.res.Cached {
			how = "from the cache"
		}
		fmt.Fprintf(os.Stderr, "bloop: %s -> %s (%s)\n", r.mod.Path, out, how)
	}
	if *f.timing {
		fmt.Fprintf(os.Stderr, "peak RSS  %8.1f MiB\n", peakRSSMiB())
	}
	return code
}
