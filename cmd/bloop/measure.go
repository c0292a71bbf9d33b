package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"bloop/atomicfile"
	"bloop/meas"
	"bloop/progress"
	"bloop/structfile"
	"bloop/view"
)

// maxModulesAtOnce bounds how many inputs are analysed at once: each holds
// its image in memory, and the procedures of a few keep every core busy.
const maxModulesAtOnce = 4

// workersFor is how many inputs are analysed at once under -j.
func workersFor(f *structFlags) int {
	if *f.jobs > 0 {
		return min(*f.jobs, maxModulesAtOnce)
	}
	return maxModulesAtOnce
}

// structMeasurements analyses the load modules an hpcrun measurement
// directory flagged and writes DIR/structs/<name>.hpcstruct for hpcprof,
// or with --format html a structure page per module into DIR/html (-o:
// another directory) with an index of them. Modules are analysed at once,
// largest first, their procedures sharing the -j threads; the report
// lists them in load-map order.
func structMeasurements(f *structFlags, opt structfile.Options, dir string) int {
	pages := opt.Writer != nil
	if *f.out != "" && !pages {
		fmt.Fprintf(os.Stderr, "bloop struct: -o names one file; the structure files of measurement directory %s go to %s\n", dir, meas.StructsDir(dir))
		return 2
	}
	if opt.JSON {
		fmt.Fprintf(os.Stderr, "bloop struct: hpcprof reads the XML format: --format %s is for binaries\n", *f.format)
		return 2
	}
	out, ext := measOutput(opt, dir)
	if pages && *f.out != "" {
		out = *f.out
	}
	d, jobs, err := measurementJobs(opt, dir, *f.sysroot, out, ext)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
		return 1
	}
	c := f.openCache()
	bar := progress.Start("bloop: "+filepath.Base(dir), *f.quiet)
	var finished atomic.Int32
	bar.Phase(fmt.Sprintf("modules 0/%d", len(jobs)), 0)
	outs := f.runJobs(c, jobs, workersFor(f), func(int, *structfile.Outcome) {
		bar.Phase(fmt.Sprintf("modules %d/%d", finished.Add(1), len(jobs)), 0)
	})
	bar.Close()
	code := reportModules(f, d, jobs, outs)
	if pages {
		if err := writePageIndex(dir, out, jobs, outs); err != nil {
			fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
			code = 1
		}
	}
	if err := writeManifest(f, &batch{jobs: jobs}, outs); err != nil {
		fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
		code = 1
	}
	return code
}

// measOutput is where the files of a measurement directory's modules go
// and their extension: structure files to structs/, which hpcprof reads
// (JSON ones as .json, which it does not pick up), pages to html/.
func measOutput(opt structfile.Options, dir string) (out, ext string) {
	if opt.Writer != nil {
		return filepath.Join(dir, "html"), outputExt(opt)
	}
	return meas.StructsDir(dir), outputExt(opt)
}

// measurementJobs reads a measurement directory and makes one job per
// module it flagged (read from sysroot when there: meas.Locate), writing
// out/<name>.hpcstruct (structs/ for hpcprof), or with another ext
// out/<name>.ext. Its warnings are printed.
func measurementJobs(opt structfile.Options, dir, sysroot, out, ext string) (*meas.Dir, []structfile.Job, error) {
	d, err := meas.Read(dir, sysroot)
	if err != nil {
		if !meas.IsMeasurementDir(dir) {
			err = fmt.Errorf("%s is a directory but not an hpcrun measurement directory (no .hpcrun profiles in it)", dir)
		}
		return nil, nil, err
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(os.Stderr, "bloop: warning: %s\n", w)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, nil, err
	}
	jobs := make([]structfile.Job, len(d.Modules))
	for i, m := range d.Modules {
		o := opt
		o.ModulePath = m.Path
		name := strings.TrimSuffix(m.Out, ".hpcstruct") + ext
		jobs[i] = structfile.Job{Bin: m.File, Dest: filepath.Join(out, name), Opt: o,
			Path: m.File, Operand: dir, Rel: filepath.Base(m.Path)}
	}
	return d, jobs, nil
}

// reportModules prints one line per module, skipped ones included, and
// returns 1 if any analysis failed. Missing modules are warnings: hpcprof
// still uses the others.
func reportModules(f *structFlags, d *meas.Dir, jobs []structfile.Job, outs []structfile.Outcome) int {
	code := 0
	for _, s := range d.Skipped {
		fmt.Fprintf(os.Stderr, "bloop: %s: skipped %s: %s\n", d.Path, s.Path, s.Reason)
	}
	for i, o := range outs {
		if o.Err != nil {
			fmt.Fprintf(os.Stderr, "bloop: %v\n", o.Err)
			code = 1
			continue
		}
		reportResult(f, jobs[i].Bin, o.Result, jobs[i].Opt.Pipeline)
		if *f.quiet {
			continue
		}
		fmt.Fprintf(os.Stderr, "bloop: %s -> %s (%s)\n", jobs[i].Opt.ModulePath, jobs[i].Dest, howWritten(&o, false))
	}
	if *f.timing {
		fmt.Fprintf(os.Stderr, "peak RSS  %8.1f MiB\n", peakRSSMiB())
	}
	return code
}

// writePageIndex writes out/index.html: a link to each module's page
// (relative, so the directory can be moved or opened from disk), and
// why a module has none.
func writePageIndex(dir, out string, jobs []structfile.Job, outs []structfile.Outcome) error {
	entries := make([]view.IndexEntry, len(jobs))
	for i, j := range jobs {
		entries[i] = view.IndexEntry{Name: j.Opt.ModulePath}
		if outs[i].Err != nil {
			entries[i].Note = outs[i].Err.Error()
		} else {
			entries[i].Link = filepath.Base(j.Dest)
		}
	}
	index := filepath.Join(out, "index.html")
	return atomicfile.Write(index, func(w io.Writer) error {
		if err := view.WriteIndex(w, "bloop struct: "+dir, entries); err != nil {
			return fmt.Errorf("writing %s: %w", index, err)
		}
		return nil
	})
}
