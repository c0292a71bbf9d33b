package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"bloop/atomicfile"
	"bloop/cache"
	"bloop/dyninst"
	"bloop/inputs"
	"bloop/loader"
	"bloop/meas"
	"bloop/normalize"
	"bloop/pipeline"
	"bloop/procs"
	"bloop/progress"
	"bloop/structfile"
	"bloop/view"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

const structUsage = `usage: bloop struct [flags] BINARY
       bloop struct [flags] MEASUREMENTS_DIR
       bloop struct [flags] [-o OUTDIR] OPERAND... [--files-from FILE]

Writes the structure file of BINARY (procedures, inlined code, loops and
statements with their addresses), by default to <basename>.hpcstruct.

Given an hpcrun measurement directory, analyses every load module its
profiles flagged and writes MEASUREMENTS_DIR/structs/<basename>.hpcstruct,
which hpcprof MEASUREMENTS_DIR reads:

    hpcrun -o m ./prog; bloop struct m; hpcprof m

With --format html it writes a structure page per module into
MEASUREMENTS_DIR/html (-o DIR: into DIR) and an index.html linking them;
structs/ is left as it is.

Given several operands, a directory that is not a measurement directory,
--files-from or --shard, it is a batch: directories are walked for ELF
files (by content; each file once, whatever links reach it), and each
input's file goes to OUTDIR (default .) as its path below its operand
(the base name for a file operand) plus .hpcstruct or .json; two inputs
that would share a name get @<8 hex digits of SHA-256 of their path>
before the extension. A refused or failed input is one line; the others
are still written. Exit 0 when every input was written, 1 if any was
refused or failed, 2 for a usage error.

A binary without DWARF whose debug file is not found on this machine
(next to it, under /usr/lib/debug or a --debug-dir) has it fetched by
build-id from the debuginfod servers of $DEBUGINFOD_URLS, into the cache
elfutils' client, gdb and perf share ($DEBUGINFOD_CACHE_PATH, else
~/.cache/debuginfod_client). So are the sources the line table names that
are not here, for the loop lines of the default mode and the pages;
--no-debuginfod or an empty $DEBUGINFOD_URLS turns that off.

Results are cached by content (binary, debug file, bloop, options) in
$HPCTOOLKIT_HPCSTRUCT_CACHE, else ~/.cache/bloop, and with --cache-url
(or $BLOOP_CACHE_URL) on an HTTP cache server that machines share, such
as nginx with WebDAV or bazel-remote; --nocache turns both off.
`

// structFlags are bloop struct's options, hpcstruct's spellings included.
type structFlags struct {
	fs                          *flagSet
	out, cacheDir, measDir      *string
	cacheURL                    *string
	jobs                        *int
	pretty, timing, verbose     *bool
	quiet, noCache, showVersion *bool
	noDebuginfod                *bool
	cacheReadOnly               *bool
	format, inline, norm        *string
	proc                        *string
	compat, cpuProfile, memProf *string
	gpucfg                      yesNo
	filesFrom, manifest, shard  *string
	shardPlan                   *string
	sysroot                     *string
	sourceDirs, debugDirs, repl multiFlag
}

func newStructFlags() *structFlags {
	f := &structFlags{fs: newFlagSet("struct", structUsage)}
	fs := f.fs
	f.out = fs.String("o", "", "output `file` (default <basename>.hpcstruct or .json; - for stdout)")
	fs.alias("o", "output")
	f.jobs = fs.Int("j", 0, "worker threads (default: all cores)")
	fs.alias("j", "jobs")
	f.cacheDir = fs.String("c", "", "structure cache `dir` (default $"+cache.EnvVar+", else ~/.cache/bloop)")
	fs.alias("c", "cache")
	f.noCache = fs.Bool("nocache", false, "neither read nor write the structure cache (local or remote)")
	f.cacheURL = fs.String("cache-url", "", "remote structure cache `URL` (http or https: nginx with WebDAV, bazel-remote) behind the local one (default $"+cache.URLEnvVar+"; a bearer token comes from $"+cache.TokenEnvVar+")")
	f.cacheReadOnly = fs.Bool("cache-readonly", false, "fetch from the remote cache, never upload to it")
	fs.Var(&f.sourceDirs, "I", "also look for sources in `dir`; dir/* searches its tree by base name (repeatable; hybrid mode)")
	fs.alias("I", "include")
	fs.alias("I", "source-dir")
	fs.Var(&f.repl, "R", "write source paths starting with `old=new`'s old with new instead (repeatable; \\= is a literal =)")
	fs.alias("R", "replace-path")
	f.measDir = fs.String("M", "", "measurement `dir`: analyse its modules, or write BINARY's file to dir/structs")
	fs.alias("M", "meas_dir")
	f.pretty = fs.Bool("pretty-print", false, "indent the XML")
	f.timing = fs.Bool("time", false, "print per-phase wall time and peak memory on stderr")
	f.verbose = fs.Bool("v", false, "verbose: report warnings and per-procedure problems")
	fs.alias("v", "verbose")
	f.quiet = fs.Bool("q", false, "quiet: no progress line and no summary, only errors and warnings")
	fs.alias("q", "quiet")
	f.showVersion = fs.Bool("V", false, "print bloop's version and exit")
	fs.alias("V", "version")
	f.format = fs.String("format", "xml", "output format: xml (hpcstruct), json, or html (a page to browse the tree beside the sources)")
	f.proc = fs.String("proc", "", "--format html: only the procedures whose name matches the regular expression `re`")
	f.inline = fs.String("inline", "auto", "inline placement: auto (hybrid when the binary has DWARF procedures, else heuristic), dwarf, heuristic (the thesis engine) or hybrid (dwarf, with loops on their statement's line when the source is readable)")
	f.norm = fs.String("N", "", "normalization passes: all, safe or none (default: all for the heuristic engine, none otherwise)")
	f.compat = fs.String("compat", "", "hpcstruct: reproduce real hpcstruct's tree exactly")
	fs.Var(&f.gpucfg, "gpucfg", "with --compat hpcstruct: analyse GPU code's control flow (loops, call sites) as hpcstruct --gpucfg yes does; also --gpucfg yes|no (the default mode always does)")
	f.cpuProfile = fs.String("cpuprofile", "", "write a CPU profile (go tool pprof) of the whole run to `file`")
	f.memProf = fs.String("memprofile", "", "write a heap profile (go tool pprof) at the end of the run to `file`")
	f.filesFrom = fs.String("files-from", "", "read more operands from `file`, one per line (- for stdin)")
	f.manifest = fs.String("manifest", "", "write a JSON Lines record per input to `file` (- for stdout; schema/manifest-v1.json)")
	f.shard = fs.String("shard", "", "analyse only shard `K/N` of the inputs; auto: K and N from $BLOOP_SHARD, a Slurm job array or a Kubernetes indexed Job (with $BLOOP_SHARD_COUNT)")
	f.shardPlan = fs.String("shard-plan", inputs.PlanCost, "how --shard splits the inputs: cost (balanced by an estimate of analysis cost from the ELF headers) or path (by a hash of each input's path below its operand)")
	fs.Var(&f.debugDirs, "debug-dir", "extra root `dir` to look for separate debug files in (repeatable)")
	f.noDebuginfod = fs.Bool("no-debuginfod", false, "do not fetch debug files and sources (for loop lines and --format html) from the debuginfod servers of $DEBUGINFOD_URLS")
	f.sysroot = fs.String("sysroot", "", "measurement directories: read each module from `dir` plus its recorded path when there, and separate debug files from dir/usr/lib/debug (the recording machine's files)")
	return f
}

// options turns the flags into what structfile needs.
func (f *structFlags) options() (structfile.Options, error) {
	var o structfile.Options
	if *f.format != "xml" && *f.format != "json" && *f.format != "html" {
		return o, fmt.Errorf("unknown format %q (want xml, json or html)", *f.format)
	}
	o.JSON, o.Pretty = *f.format == "json", *f.pretty
	// One client for the run: debug files, and the page's sources.
	debugF, _, sourceF := fetchers(debuginfodClient(*f.noDebuginfod))
	if *f.format == "html" {
		so := view.StructOptions{Sources: view.Options{SourceDirs: f.sourceDirs, Fetcher: sourceF}, MaxScopes: pageMaxScopes}
		if *f.proc != "" {
			re, err := regexp.Compile(*f.proc)
			if err != nil {
				return o, fmt.Errorf("--proc: %v", err)
			}
			so.Proc = re
		}
		o.Writer = func(w io.Writer) structfile.Writer { return view.NewStructWriter(w, so) }
	} else if *f.proc != "" {
		return o, fmt.Errorf("--proc chooses the procedures of an HTML page: use it with --format html")
	}
	o.Load = loader.Options{DebugDirs: loader.SysrootDebugDirs(f.debugDirs, *f.sysroot), Workers: *f.jobs,
		Fetcher: debugF}
	o.Pipeline = pipeline.Options{Workers: *f.jobs, SourceDirs: f.sourceDirs}
	if sourceF != nil {
		// The hybrid mode's loop lines from the sources a debuginfod
		// serves, as the page's text.
		o.Pipeline.SourceFetcher = sourceF
	}
	var err error
	if o.Pipeline.Engine, err = pipeline.ParseEngine(*f.inline); err != nil {
		return o, err
	}
	if *f.norm != "" {
		lvl, err := normalize.ParseLevel(*f.norm)
		if err != nil {
			return o, err
		}
		o.Pipeline.Normalize = &lvl
	}
	switch *f.compat {
	case "":
	case "hpcstruct":
		o.Pipeline.Dyninst = dyninst.Hpcstruct
	default:
		return o, fmt.Errorf("unknown --compat %q (want hpcstruct)", *f.compat)
	}
	o.Pipeline.GPUCFG = bool(f.gpucfg)
	o.Replace, err = parseReplacements(f.repl)
	return o, err
}

// parseReplacements reads -R's old=new pairs, for bloop struct's paths
// and the pages' sources alike.
func parseReplacements(repl []string) ([]structfile.Replacement, error) {
	var out []structfile.Replacement
	for _, r := range repl {
		rp, err := structfile.ParseReplacement(r)
		if err != nil {
			return nil, err
		}
		out = append(out, rp)
	}
	return out, nil
}

// openCache returns the cache the flags ask for, nil for none: the local
// directory, with the remote tier of --cache-url (else $BLOOP_CACHE_URL)
// behind it. A remote URL that is not one is a warning, as an unusable
// directory is.
func (f *structFlags) openCache() *cache.Cache {
	c := openCache(*f.cacheDir, *f.noCache)
	u := *f.cacheURL
	if u == "" {
		u = os.Getenv(cache.URLEnvVar)
	}
	if c == nil || u == "" {
		return c
	}
	err := c.SetRemote(cache.RemoteOptions{URL: u, Token: os.Getenv(cache.TokenEnvVar), ReadOnly: *f.cacheReadOnly})
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop: warning: %v; going on without it\n", err)
	}
	return c
}

// openCache opens the cache of -c dir (default cache.DefaultDir), or none
// with --nocache. A cache that cannot be created is a warning: the run
// goes on without it.
func openCache(dir string, off bool) *cache.Cache {
	if off {
		return nil
	}
	if dir == "" {
		dir = cache.DefaultDir()
	}
	if dir == "" {
		return nil
	}
	c, err := cache.Open(dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop: warning: %v; running without the cache\n", err)
		return nil
	}
	return c
}

func runStruct(args []string) int {
	// Not in record, where Ctrl-C stops the program and the recording is
	// still written.
	atomicfile.HandleSignals()
	f := newStructFlags()
	operands, code, ok := f.fs.parse(args)
	if !ok {
		return code
	}
	if *f.showVersion {
		fmt.Println(versionString())
		return 0
	}
	operands, err := f.allOperands(operands)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop struct: %v\n", err)
		return 2
	}
	shard, err := f.parseShard()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop struct: %v\n", err)
		return 2
	}
	if len(operands) == 0 && *f.measDir == "" {
		fmt.Fprintln(os.Stderr, "bloop struct: no binary or measurement directory given (see bloop struct -h)")
		return 2
	}
	opt, err := f.options()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop struct: %v\n", err)
		return 2
	}
	if *f.cpuProfile != "" {
		stop, err := startCPUProfile(*f.cpuProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
			return 1
		}
		defer stop()
	}
	if *f.memProf != "" {
		defer writeHeapProfile(*f.memProf)
	}
	if *f.jobs > 0 {
		// -j bounds the threads of the whole run, loading included, so
		// that -j1 is what one core does.
		runtime.GOMAXPROCS(*f.jobs)
	}
	if f.isBatch(operands) {
		if *f.measDir != "" {
			fmt.Fprintln(os.Stderr, "bloop struct: -M takes one binary; a batch writes to -o DIR (measurement directories among its operands get their structs directories)")
			return 2
		}
		set := inputs.Collect(operands)
		code := structBatch(f, opt, set, shard)
		for _, d := range set.Empty {
			fmt.Fprintf(os.Stderr, "bloop: %s: no ELF file below it and no .hpcrun profile in it\n", d)
			code = max(code, 1)
		}
		return code
	}
	target := *f.measDir
	if len(operands) == 1 {
		target = operands[0]
	}
	if st, err := os.Stat(target); err == nil && st.IsDir() {
		return structMeasurements(f, opt, target)
	}
	if *f.measDir != "" && opt.Writer != nil {
		fmt.Fprintf(os.Stderr, "bloop struct: hpcprof reads the XML format: -M writes it, not --format %s\n", *f.format)
		return 2
	}
	if *f.measDir != "" && *f.out == "" {
		dest := filepath.Join(meas.StructsDir(*f.measDir), filepath.Base(target)+".hpcstruct")
		f.out = &dest
		if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
			fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
			return 1
		}
	}
	return structBinary(f, opt, target)
}

// allOperands adds the operands of --files-from to those of the command
// line.
func (f *structFlags) allOperands(ops []string) ([]string, error) {
	if *f.filesFrom == "" {
		return ops, nil
	}
	var r io.Reader = os.Stdin
	if *f.filesFrom != "-" {
		file, err := os.Open(*f.filesFrom)
		if err != nil {
			return nil, fmt.Errorf("--files-from: %w", err)
		}
		defer file.Close()
		r = file
	}
	more, err := inputs.ReadList(r)
	if err != nil {
		return nil, fmt.Errorf("--files-from %s: %w", *f.filesFrom, err)
	}
	return append(ops, more...), nil
}

// isBatch reports whether the run is a batch: several operands, a list,
// a shard, or a directory that is not a measurement directory.
func (f *structFlags) isBatch(ops []string) bool {
	if len(ops) != 1 || *f.filesFrom != "" || *f.shard != "" {
		return len(ops) > 0
	}
	st, err := os.Stat(ops[0])
	return err == nil && st.IsDir() && !meas.IsMeasurementDir(ops[0])
}

// structBinary writes one binary's structure file.
func structBinary(f *structFlags, opt structfile.Options, bin string) int {
	t0 := time.Now()
	dest := *f.out
	if dest == "" {
		dest = filepath.Base(bin) + outputExt(opt)
	}
	bar := progress.Start("bloop: "+filepath.Base(bin), *f.quiet)
	bar.Phase("loading", 0)
	opt.Progress = func(done, total int) {
		if done == 1 {
			bar.Phase("analysing procedures", total)
		}
		bar.Set(done, total)
	}
	jobs := []structfile.Job{{Bin: bin, Dest: dest, Opt: opt, Operand: bin, Rel: filepath.Base(bin)}}
	outs := f.runJobs(f.openCache(), jobs, 1, nil)
	bar.Close()
	code := 0
	if o := outs[0]; o.Err != nil {
		fmt.Fprintf(os.Stderr, "bloop: %v\n", o.Err)
		code = 1
	} else {
		reportWritten(f, bin, dest, o.Result, opt.Pipeline, t0)
	}
	if err := writeManifest(f, &batch{jobs: jobs}, outs); err != nil {
		fmt.Fprintf(os.Stderr, "bloop: %v\n", err)
		code = 1
	}
	return code
}

// reportWritten says what a single binary's run did.
func reportWritten(f *structFlags, bin, dest string, r *structfile.Result, popt pipeline.Options, t0 time.Time) {
	reportResult(f, bin, r, popt)
	if *f.timing {
		fmt.Fprintf(os.Stderr, "load      %8.3fs\nanalyze   %8.3fs (and write)\ntotal     %8.3fs\npeak RSS  %8.1f MiB\n",
			r.Load.Seconds(), r.Analyze.Seconds(), time.Since(t0).Seconds(), peakRSSMiB())
	}
	if dest != "-" && !*f.quiet && progress.IsTerminal(os.Stderr) {
		from := ""
		if r.Cached {
			from = " (from the cache)"
		}
		fmt.Fprintf(os.Stderr, "bloop: wrote %s%s\n", dest, from)
	}
}

// reportResult prints a run's warnings and, under -v, its problems and
// counts. A file from the cache comes with the warnings and corrupt data
// of its input; the analysis's problems and counts were shown when it was
// made. popt are the options the file was made with.
func reportResult(f *structFlags, bin string, r *structfile.Result, popt pipeline.Options) {
	// What the input is like is said on every run, from the cache too.
	for _, w := range r.Warnings {
		fmt.Fprintf(os.Stderr, "bloop: warning: %s\n", w)
	}
	reportCorrupt(os.Stderr, bin, r.Corrupt, *f.verbose)
	if *f.verbose && r.DebugFile != "" {
		fmt.Fprintf(os.Stderr, "bloop: %s: debug file %s (%s)\n", bin, r.DebugFile, r.DebugSource)
	}
	img := r.Image
	if img == nil {
		if *f.verbose {
			fmt.Fprintf(os.Stderr, "bloop: %s: structure file from the cache\n", bin)
		}
		return
	}
	// Cubins get no loops from hpcstruct either without --gpucfg; with it
	// and in the default mode, a generation bloop does not decode gets none.
	if pipeline.NoControlFlow(img, popt) {
		arch := string(img.Arch)
		if img.Arch == loader.CUDA {
			arch = fmt.Sprintf("%s sm_%d", arch, img.SM)
		}
		fmt.Fprintf(os.Stderr, "bloop: warning: %s: %s has no control-flow analysis yet: procedures, statements and inlined code only, no loops\n", bin, arch)
	}
	reportProblems(bin, r.Problems, *f.verbose)
	if *f.verbose {
		if n := img.Lines.Overlaps; n > 0 {
			fmt.Fprintf(os.Stderr, "bloop: %s: %d line rows overlapped a later row and were cut at its start\n", bin, n)
		}
		fmt.Fprintf(os.Stderr, "bloop: %s: %d procedures, %d files, 0 skipped\n", bin, r.NumProcs, r.NumFiles)
		reportSources(os.Stderr, bin, img, r.Procs)
	}
}

// reportCorrupt tells that the input held inconsistent data, which the
// loader repaired or ignored, so the structure may be wrong there: one
// line without -v, one per kind (with its section and first offset, for
// readelf or a hex dump) under -v.
func reportCorrupt(w io.Writer, bin string, bad []loader.Corruption, verbose bool) {
	if len(bad) == 0 {
		return
	}
	if !verbose {
		places := 0
		for _, c := range bad {
			places += c.Count
		}
		fmt.Fprintf(w, "bloop: warning: %s: corrupt data repaired or ignored (%s, %s); the structure may be wrong there; -v lists them\n",
			bin, plural(len(bad), "kind"), plural(places, "place"))
		return
	}
	for _, c := range bad {
		in := c.Section
		if c.File != "" {
			in += " of " + c.File
		}
		fmt.Fprintf(w, "bloop: %s: corrupt data: %s: %d in %s, first at offset %#x\n", bin, c.Kind, c.Count, in, c.Offset)
	}
}

// plural is "n word", with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
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

func peakRSSMiB() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	_ = runtime.GOOS
	return float64(ru.Maxrss) / 1024
}

// outputExt is the extension of the files the options write.
func outputExt(opt structfile.Options) string {
	switch {
	case opt.Writer != nil:
		return ".html"
	case opt.JSON:
		return ".json"
	}
	return ".hpcstruct"
}
