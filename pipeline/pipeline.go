// Package pipeline runs bloop's stages over one image: for every procedure,
// CFG, loop forest and scope placement on a bounded worker pool, results in a
// fixed order so output does not depend on the number of workers.
package pipeline

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"bloop/cfg"
	"bloop/havlak"
	"bloop/heuristic"
	"bloop/loader"
	"bloop/normalize"
	"bloop/par"
	"bloop/scopes"
	"bloop/source"
)

// Engine selects how inlined code is placed.
type Engine int

// Placement engines for --inline.
const (
	Auto      Engine = iota // Hybrid when the binary has DWARF procedure or inline records, else Heuristic
	DWARF                   // DWARF inline trees (matches hpcstruct)
	Heuristic               // the thesis's heuristics (line tables and descriptors only)
	Hybrid                  // DWARF inline contexts, loops moved to their statement's line in the source
)

// ParseEngine reads the --inline flag.
func ParseEngine(s string) (Engine, error) {
	switch s {
	case "auto":
		return Auto, nil
	case "dwarf":
		return DWARF, nil
	case "heuristic":
		return Heuristic, nil
	case "hybrid":
		return Hybrid, nil
	}
	return Auto, fmt.Errorf("unknown inline engine %q (want auto, dwarf, heuristic or hybrid)", s)
}

// Options tune an analysis.
type Options struct {
	Workers int // <= 0: all cores
	Engine  Engine
	// Normalize selects the thesis's normalization passes; nil means the
	// engine's default (all for the heuristic engine, none for DWARF).
	Normalize *normalize.Level
	// Compat reproduces real hpcstruct's tree: the DWARF engine, no
	// normalization, loop lines from exit conditions, and names from GNU's
	// demangler (c++filt) when it is installed.
	Compat bool
	// SourceDirs are where the hybrid mode looks for sources (besides the
	// paths the line table gives) to put loops on their statement's line.
	SourceDirs []string
}

// ProcError is a problem confined to one procedure, which was skipped.
type ProcError struct {
	Func string
	Addr uint64
	Err  error
}

func (e *ProcError) Error() string {
	return fmt.Sprintf("procedure %s at %#x skipped: %v", e.Func, e.Addr, e.Err)
}

// Analyze builds the scope tree of img. Errors in single procedures are
// returned beside the module; those procedures are left out.
func Analyze(img *loader.Image, opt Options) (*scopes.Module, []error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	noret := noReturnSet(img)
	region := continuation(img)
	n := len(img.Funcs)
	inputs := make([]scopes.Input, n)
	results := make([]scopes.ProcResult, n)
	errs := make([]error, n)
	// Phase 1: CFGs and loops. Phase 2 needs all of them: a procedure that
	// another one continues into by a call to the next instruction is empty.
	par.For(workers, n, func(i int) {
		inputs[i], errs[i] = graphOne(img, img.Funcs[i], noret, region)
	})
	claimed := map[uint64]bool{}
	for i := range inputs {
		if g := inputs[i].Graph; g != nil && errs[i] == nil {
			for _, t := range g.Continued {
				if t != img.Funcs[i].Addr {
					claimed[t] = true
				}
			}
		}
	}
	engine := opt.Engine
	if opt.Compat {
		engine = DWARF
	}
	if engine == Auto {
		// DWARF procedure records come with inline records whenever the
		// compiler inlined (gcc and clang emit them even at -g1 and
		// -gline-tables-only), so their absence there means nothing was
		// inlined. The thesis engine is for line tables without them.
		// With DWARF, the hybrid mode: DWARF contexts, and loops on their
		// statement's line where the sources can be read (else it is the
		// DWARF engine). It finds the most source loops on their line on
		// the corpus (bloop eval --source).
		engine = Heuristic
		if img.HasInlineInfo() || len(img.Procs) > 0 {
			engine = Hybrid
		}
	}
	lvl := normalize.None
	if engine == Heuristic {
		lvl = normalize.All
	}
	if opt.Normalize != nil && !opt.Compat {
		lvl = *opt.Normalize
	}
	var gnu map[string]string
	if opt.Compat {
		gnu = gnuNames(img)
	}
	names := scopes.NewNames(gnu)
	var hybrid *source.Finder
	if engine == Hybrid {
		hybrid = &source.Finder{Dirs: opt.SourceDirs}
	}
	var bounds *heuristic.Bounds
	if engine == Heuristic {
		bounds = heuristic.NewBounds(img)
	}
	par.For(workers, n, func(i int) {
		if errs[i] != nil {
			return
		}
		inputs[i].Claimed = claimed[img.Funcs[i].Addr]
		inputs[i].Names = names
		results[i], errs[i] = placeOne(inputs[i], bounds, lvl, hybrid)
	})
	var procs []scopes.ProcResult
	var all []error
	for i, r := range results {
		if errs[i] != nil {
			all = append(all, errs[i])
			continue
		}
		procs = append(procs, r)
	}
	return scopes.NewModule(img.Path, img.Name, procs), all
}

func graphOne(img *loader.Image, fn *loader.Func, noret func(uint64) bool, region func(uint64, bool) (uint64, uint64, bool)) (in scopes.Input, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &ProcError{fn.Name, fn.Addr, fmt.Errorf("internal error: %v", r)}
		}
	}()
	in = scopes.Input{Img: img, Func: fn, Sub: img.SubprogramAt(fn.Addr)}
	if fn.PLT {
		return in, nil
	}
	g, err := cfg.Build(img, fn.Addr, fn.Addr, fn.End, cfg.Options{NoReturn: noret, Region: region, LandingPad: img.PadFor})
	if errors.Is(err, cfg.ErrArch) {
		return in, nil // statements and inlined code still, no loops
	}
	if err != nil {
		return in, &ProcError{fn.Name, fn.Addr, err}
	}
	in.Graph = g
	in.Forest = havlak.Find(len(g.Blocks), g.Entry, g.Succs())
	return in, nil
}

func placeOne(in scopes.Input, bounds *heuristic.Bounds, lvl normalize.Level, hybrid *source.Finder) (res scopes.ProcResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &ProcError{in.Func.Name, in.Func.Addr, fmt.Errorf("internal error: %v", r)}
		}
	}()
	var s *scopes.Scope
	var file string
	if bounds != nil {
		s, file = heuristic.BuildProc(in, bounds, lvl)
	} else {
		s, file = scopes.BuildProc(in)
		if hybrid != nil {
			source.SnapLoops(s, hybrid)
		}
		normalize.Run(s, lvl, nil)
	}
	if err := checkProc(in, s); err != nil {
		return res, &ProcError{in.Func.Name, in.Func.Addr, err}
	}
	return scopes.ProcResult{Scope: s, File: file}, nil
}

// continuation tells which code outside a procedure's extent its CFG
// continues into, as Dyninst parses it: hot/cold split parts (foo.cold)
// reached by a jump, and any procedure reached by a call to the next
// instruction. Such code appears in both procedures, as in hpcstruct.
func continuation(img *loader.Image) func(uint64, bool) (uint64, uint64, bool) {
	return func(t uint64, callNext bool) (uint64, uint64, bool) {
		f := img.FuncAt(t)
		if f == nil || f.PLT {
			return 0, 0, false
		}
		// A jump to a procedure's entry is a tail call, even into a .cold part.
		if callNext || strings.Contains(f.Name, ".cold") && t != f.Addr {
			return f.Addr, f.End, true
		}
		return 0, 0, false
	}
}

// noReturn lists procedures known never to return.
var noReturn = map[string]bool{
	"exit": true, "_exit": true, "_Exit": true, "abort": true, "quick_exit": true,
	"__stack_chk_fail": true, "__assert_fail": true, "__assert_perror_fail": true,
	"__cxa_throw": true, "__cxa_rethrow": true, "_Unwind_Resume": true,
	"__cxa_bad_cast": true, "__cxa_bad_typeid": true, "__cxa_throw_bad_array_new_length": true,
	"__cxa_call_unexpected": true, "__cxa_pure_virtual": true, "_ZSt9terminatev": true,
	"longjmp": true, "siglongjmp": true, "_longjmp": true, "__longjmp_chk": true,
	"pthread_exit": true, "__fortify_fail": true, "__chk_fail": true, "__libc_fatal": true,
	"err": true, "errx": true, "verr": true, "verrx": true,
	"_gfortran_stop_string": true, "_gfortran_error_stop_string": true,
	"_gfortran_error_stop_numeric": true, "_gfortran_runtime_error": true,
	"_gfortran_runtime_error_at": true, "_gfortran_os_error": true, "_gfortran_os_error_at": true,
	"_gfortran_generate_error": true,
}

func isNoReturn(name string) bool {
	name = strings.TrimSuffix(name, "@plt")
	if i := strings.IndexByte(name, '@'); i > 0 {
		name = name[:i]
	}
	// std::__throw_* helpers of libstdc++ never return.
	return noReturn[name] || strings.HasPrefix(name, "_ZSt") && strings.Contains(name, "__throw_")
}

func noReturnSet(img *loader.Image) func(uint64) bool {
	set := map[uint64]bool{}
	for _, fn := range img.Funcs {
		for _, a := range fn.Aliases {
			if isNoReturn(a) {
				set[fn.Addr] = true
			}
		}
	}
	return func(a uint64) bool { return set[a] }
}
