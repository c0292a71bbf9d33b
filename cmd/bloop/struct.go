package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"bloop/isa"
	"bloop/loader"
	"bloop/normalize"
	"bloop/pipeline"
	"bloop/procs"
	"bloop/scopes"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runStruct(args []string) int {
	fs := newFlagSet("struct", "usage: bloop struct [flags] BINARY\n")
	out := fs.String("o", "", "output file (default <basename>.hpcstruct or .json; - for stdout)")
	jobs := fs.Int("j", 0, "worker threads (default: all cores)")
	pretty := fs.Bool("pretty-print", false, "indent the XML")
	timing := fs.Bool("time", false, "print per-phase wall time and peak memory on stderr")
	verbose := fs.Bool("v", false, "verbose: report warnings and per-procedure problems")
	format := fs.String("format", "xml", "output format: xml (hpcstruct) or json")
	inline := fs.String("inline", "auto", "inline placement: auto (hybrid when the binary has DWARF procedures, else heuristic), dwarf, heuristic (the thesis engine) or hybrid (dwarf, with loops on their statement's line when the source is readable)")
	norm := fs.String("N", "", "normalization passes: all, safe or none (default: all for the heuristic engine, none otherwise)")
	compat := fs.String("compat", "", "hpcstruct: reproduce real hpcstruct's tree exactly")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (go tool pprof) of the whole run to `FILE`")
	memProfile := fs.String("memprofile", "", "write a heap profile (go tool pprof) at the end of the run to `FILE`")
	var debugDirs, sourceDirs multiFlag
	fs.Var(&sourceDirs, "source-dir", "directory to look for sources in, besides the paths in the line table (repeatable; hybrid mode)")
	fs.Var(&debugDirs, "debug-dir", "extra root for separate debug files (repeatable)")
	if err := fs.Parse(splitShortInts(args)); err != nil {
		return 1
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 1
	}
	if *format != "xml" && *format != "json" {
		fmt.Fprintf(os.Stderr, "bloop: unknown format %q (want xml or json)\n", *format)
		return 1
	}
	popt := pipeline.Options{Workers: *jobs, SourceDirs: sourceDirs}
	var err error
	if popt.Engine, err = pipeline.ParseEngine(*inline); err != nil {
		fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
		return 1
	}
	if *norm != "" {
		lvl, err := normalize.ParseLevel(*norm)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
			return 1
		}
		popt.Normalize = &lvl
	}
	switch *compat {
	case "":
	case "hpcstruct":
		popt.Compat = true
	default:
		fmt.Fprintf(os.Stderr, "bloop: unknown --compat %q (want hpcstruct)\n", *compat)
		return 1
	}
	bin := fs.Arg(0)
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
			return 1
		}
		defer stop()
	}
	if *memProfile != "" {
		defer writeHeapProfile(*memProfile)
	}
	t0 := time.Now()
	if *jobs > 0 {
		// -j bounds the threads of the whole run, loading included, so
		// that -j1 is what one core does.
		runtime.GOMAXPROCS(*jobs)
	}
	img, err := pipeline.Open(bin, loader.Options{DebugDirs: debugDirs, Workers: *jobs}, popt)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
		return 1
	}
	tLoad := time.Since(t0)
	// Cubins get no loops from hpcstruct either (without --gpucfg).
	if isa.For(img.Machine) == nil && img.Arch != loader.CUDA {
		fmt.Fprintf(os.Stderr, "bloop: warning: %s: %s has no control-flow analysis yet: procedures, statements and inlined code only, no loops\n", bin, img.Arch)
	}
	for _, w := range img.Warnings {
		fmt.Fprintf(os.Stderr, "bloop: warning: %s\n", w)
	}
	if abs, err := filepath.Abs(img.Path); err == nil {
		img.Path = abs // the module as hpcrun records it: absolute, links resolved
	}
	dest := *out
	if dest == "" {
		ext := ".hpcstruct"
		if *format == "json" {
			ext = ".json"
		}
		dest = filepath.Base(bin) + ext
	}
	// Analysis and writing are one streaming phase: procedures are written
	// in order as they are finished.
	t1 := time.Now()
	popt.Procs = pipeline.Procedures(img)
	var probs []*pipeline.Problem
	nprocs, nfiles := 0, 0
	write := func(w io.Writer) error {
		var sw structWriter = scopes.NewXMLWriter(w, *pretty)
		if *format == "json" {
			sw = scopes.NewJSONWriter(w)
		}
		sw.BeginModule(img.Path, img.Name)
		last := ""
		var err error
		probs, err = pipeline.Run(img, popt, func(file string, p *scopes.Scope) error {
			if nprocs == 0 || file != last {
				nfiles++
				last = file
			}
			if p != nil {
				nprocs++
			}
			sw.Proc(file, p)
			return nil
		})
		if err != nil {
			return err
		}
		sw.EndModule()
		return sw.Close()
	}
	if err := writeAtomic(dest, write); err != nil {
		fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
		return 1
	}
	tAnalyze := time.Since(t1)
	reportProblems(bin, probs, *verbose)
	if *verbose {
		if n := img.Lines.Overlaps; n > 0 {
			fmt.Fprintf(os.Stderr, "bloop: %s: %d line rows overlapped a later row and were cut at its start\n", bin, n)
		}
		fmt.Fprintf(os.Stderr, "bloop: %s: %d procedures, %d files, 0 skipped\n", bin, nprocs, nfiles)
		reportSources(os.Stderr, bin, img, popt.Procs)
	}
	if *timing {
		fmt.Fprintf(os.Stderr, "load      %8.3fs\nanalyze   %8.3fs (and write)\ntotal     %8.3fs\npeak RSS  %8.1f MiB\n",
			tLoad.Seconds(), tAnalyze.Seconds(), time.Since(t0).Seconds(), peakRSSMiB())
	}
	return 0
}

// structWriter is what bloop struct needs of an output format.
type structWriter interface {
	BeginModule(path, name string)
	Proc(file string, p *scopes.Scope)
	EndModule()
	Close() error
}

// reportProblems lists the problems bloop worked around under -v, with a
// count of each kind; internal errors (bloop bugs) are always shown.
func reportProblems(bin string, probs []*pipeline.Problem, verbose bool) {
	counts := map[string]int{}
	var kinds []string
	for _, p := range probs {
		if verbose || p.Kind == pipeline.KindInternal {
			fmt.Fprintf(os.Stderr, "bloop: %s: %v\n", bin, p)
		}
		if counts[p.Kind] == 0 {
			kinds = append(kinds, p.Kind)
		}
		counts[p.Kind]++
	}
	if !verbose {
		return
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(os.Stderr, "bloop: %s: %d procedures with %s\n", bin, counts[k], k)
	}
}

// reportSources says how the procedures were found, with a warning when
// the file has neither symbols nor DWARF: then every procedure but the
// PLT stubs is inferred, and named targ<address> (_start at the entry).
func reportSources(w io.Writer, bin string, img *loader.Image, t *procs.Table) {
	symbols := false
	for _, fn := range img.Funcs {
		symbols = symbols || !fn.PLT
	}
	if !symbols && len(img.Procs) == 0 && img.Lines.Empty() {
		fmt.Fprintf(w, "bloop: warning: %s: no symbols and no DWARF: procedures other than PLT stubs are found in the code and named targ<address> (_start at the entry point); statements have no lines\n", bin)
	}
	n := t.Counts()
	var parts []string
	for _, s := range []procs.Source{procs.Symbol, procs.Entry, procs.Call, procs.EHFrame, procs.InitArray, procs.Gap} {
		parts = append(parts, fmt.Sprintf("%s %d", s, n[s]))
	}
	fmt.Fprintf(w, "bloop: %s: procedures by source: %s\n", bin, strings.Join(parts, ", "))
}

// writeAtomic writes to a temporary file beside dest and renames it, so a
// failed run never leaves a partial file that looks complete.
func writeAtomic(dest string, write func(io.Writer) error) error {
	if dest == "-" {
		return write(os.Stdout)
	}
	if st, err := os.Stat(dest); err == nil && !st.Mode().IsRegular() {
		// A device or pipe (-o /dev/null, a FIFO) is written in place:
		// renaming over it would replace the device with a file.
		f, err := os.OpenFile(dest, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("cannot write %s: %v", dest, err)
		}
		if err := write(f); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %v", dest, err)
		}
		return f.Close()
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", dest, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %v", dest, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %v", dest, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), dest); err != nil {
		return fmt.Errorf("cannot write %s: %v", dest, err)
	}
	return nil
}

func peakRSSMiB() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	_ = runtime.GOOS
	return float64(ru.Maxrss) / 1024
}

// splitShortInts accepts hpcstruct's -j4 spelling as -j 4.
func splitShortInts(args []string) []string {
	var out []string
	for _, a := range args {
		if len(a) > 2 && a[0] == '-' && a[1] == 'j' && a[2] >= '0' && a[2] <= '9' {
			out = append(out, "-j", a[2:])
			continue
		}
		out = append(out, a)
	}
	return out
}
