package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"bloop/atomicfile"
	"bloop/cache"
	"bloop/meas"
	"bloop/profile"
	"bloop/report"
	"bloop/view"
)

// defaultRecording is what report reads without an argument: the file
// record writes without -o, as perf report reads perf.data.
const defaultRecording = "bloop.rec"

func runReport(args []string) int {
	fs := newFlagSet("report", "usage: bloop report [flags] [RECORDING | perf.data | MEASUREMENTS_DIR]\n\nReads RECORDING, default "+defaultRecording+" (what bloop record writes without -o),\na perf.data file (perf record's), told apart by their contents, or an\nHPCToolkit measurement directory (hpcrun's; its structs/ used when bloop\nstruct or hpcstruct wrote them).\nEach sampled module is analysed as bloop struct analyses it, through the\nstructure cache ($"+cache.EnvVar+", else ~/.cache/bloop; --nocache: off).\n")
	viewName := fs.String("view", "top-down", "view: top-down, bottom-up or flat")
	threads := fs.Bool("threads", false, "top-down view per thread instead of merged")
	minPct := fs.Float64("min", 1, "hide scopes with less than this percentage of the samples")
	depth := fs.Int("depth", 0, "print at most this many levels (0: all)")
	lines := fs.Bool("lines", false, "show source lines as scopes")
	pprofOut := fs.String("pprof", "", "also write a pprof profile (gzip'd profile.proto) to this file")
	noAnalysis := fs.Bool("no-struct", false, "do not analyse modules on the fly (use symbols and line tables, or -struct files)")
	cacheDir := fs.String("c", "", "structure cache `dir` (default $"+cache.EnvVar+", else ~/.cache/bloop)")
	fs.alias("c", "cache")
	noCache := fs.Bool("nocache", false, "neither read nor write the structure cache")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (go tool pprof) of the report to `file`")
	memProfile := fs.String("memprofile", "", "write a heap profile (go tool pprof) of the report to `file`, taken when the trees are built")
	event := fs.String("event", "", "perf.data, measurement directory: the `event` (metric) the views show (default: the first)")
	hpcrunOut := fs.String("hpcrun", "", "also write the samples as an HPCToolkit measurement `dir` (one .hpcrun profile per thread, every event a metric) for hpcprof and hpcviewer; bloop struct DIR then writes its structs/")
	htmlOut := fs.String("html", "", "also write the report as one self-contained HTML page (flame graph, the three views, sources) to `file`")
	var structs, debugDirs, moduleDirs multiFlag
	sources := pageSourceFlags(fs)
	fs.Var(&moduleDirs, "module-dir", "`dir` holding modules by base name: for a perf.data file's module whose recorded path has another build-id, a measurement directory's module no longer at its recorded path (repeatable)")
	fs.Var(&structs, "struct", "structure `file` (bloop struct or hpcstruct) to use for the module whose code it matches (repeatable)")
	fs.Var(&debugDirs, "debug-dir", "extra root `dir` to look for separate debug files in (repeatable)")
	noDebuginfod := fs.Bool("no-debuginfod", false, "do not fetch modules, debug files and sources (for loop lines and the page) from the debuginfod servers of $DEBUGINFOD_URLS")
	jobs := fs.Int("j", 0, "workers unwinding the samples (default: all cores; the output is the same whatever it is)")
	fs.alias("j", "jobs")
	sysroot := fs.String("sysroot", "", "read each module from `dir` plus its recorded path when there (the recording machine's files, as perf's --symfs: an aarch64 or ppc64le recording reported here)")
	operands, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(operands) > 1 {
		fs.Usage()
		return 2
	}
	recording := defaultRecording
	if len(operands) == 1 {
		recording = operands[0]
	} else if _, err := os.Stat(recording); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(os.Stderr, "bloop: no recording %s in this directory: make one with 'bloop record -- PROGRAM [ARGS...]' or name one: bloop report FILE\n", recording)
		return 1
	}
	if *viewName != "top-down" && *viewName != "bottom-up" && *viewName != "flat" {
		fmt.Fprintf(os.Stderr, "bloop: unknown view %q (want top-down, bottom-up or flat)\n", *viewName)
		return 1
	}
	if *hpcrunOut != "" && meas.IsMeasurementDir(*hpcrunOut) {
		// Said before the analysis, which can take a while.
		fmt.Fprintf(os.Stderr, "bloop: %s already holds .hpcrun profiles: not written over\n", *hpcrunOut)
		return 1
	}
	vo, err := sources()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
		return 2
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
			return 1
		}
		defer stop()
	}
	opt := profile.Options{StructFiles: structs, DebugDirs: debugDirs, Event: *event, ModuleDirs: moduleDirs, Sysroot: *sysroot, Jobs: *jobs}
	if opt.Jobs <= 0 {
		opt.Jobs = runtime.GOMAXPROCS(0)
	}
	_, opt.Fetcher, vo.Fetcher = fetchers(debuginfodClient(*noDebuginfod))
	if vo.Fetcher != nil {
		// The analysis's loop lines from fetched sources too, as the
		// page's text.
		opt.Sources = vo.Fetcher
	}
	if *noAnalysis {
		opt.Analyze = func(string) bool { return false }
	}
	opt.Cache = openCache(*cacheDir, *noCache)
	p, err := profile.Build(recording, opt)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
		return 1
	}
	if *memProfile != "" {
		writeHeapProfile(*memProfile)
	}
	for _, warning := range p.Warnings {
		fmt.Fprintf(os.Stderr, "bloop: warning: %s\n", warning)
	}
	w := os.Stdout
	report.Summary(w, p)
	fmt.Fprintln(w)
	po := report.Options{MinPercent: *minPct, MaxDepth: *depth, Lines: *lines}
	switch *viewName {
	case "top-down":
		report.TopDown(w, p, po, *threads)
	case "bottom-up":
		report.BottomUp(w, p, po)
	case "flat":
		report.Flat(w, p, po)
	}
	if *htmlOut != "" {
		err := atomicfile.Write(*htmlOut, func(f io.Writer) error {
			if err := view.WriteReport(f, p, vo); err != nil {
				return fmt.Errorf("writing %s: %w", *htmlOut, err)
			}
			return nil
		})
		if err != nil {
			fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
			return 1
		}
	}
	if *hpcrunOut != "" {
		if err := p.WriteHpcrun(*hpcrunOut); err != nil {
			fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
			return 1
		}
	}
	if *pprofOut != "" {
		f, err := os.Create(*pprofOut)
		if err == nil {
			err = p.WritePprof(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
			return 1
		}
	}
	return 0
}
