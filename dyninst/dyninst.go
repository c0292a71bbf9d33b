// Package dyninst is bloop's emulation of Dyninst 12.3's ParseAPI, the
// parser under hpcstruct 2023.08, for --compat hpcstruct: its procedure
// discovery (discover.go), its return-status analysis (noreturn.go) with
// the parse memo that spares discovery's rounds most parses (memo.go),
// and the one policy value that says where its parse departs from bloop's.
// The default mode passes no policy (nil); cfg, isa and pipeline ask the
// policy instead of a mode flag.
package dyninst

import (
	"debug/elf"

	"bloop/cfg"
	"bloop/isa"
	"bloop/loader"
	"bloop/procs"
)

// Policy is a parser to emulate. A nil *Policy is none: bloop's own parse,
// which every method answers for.
type Policy struct {
	// noReturn holds the names its parser knows never return, and only
	// those (dyninst12NoReturn).
	noReturn map[string]bool
	// decode is its reading of an instruction set (isa.Dyninst12For).
	decode func(elf.Machine) isa.Dyninst12
}

// Hpcstruct is Dyninst 12.3's parse, as hpcstruct 2023.08 runs it.
var Hpcstruct = &Policy{noReturn: dyninst12NoReturn, decode: isa.Dyninst12For}

// CFG is the policy of cfg.Build for code of machine m; nil for none.
func (p *Policy) CFG(m elf.Machine) *cfg.Dyninst {
	if p == nil {
		return nil
	}
	// Dyninst parses through the ends of extents on every architecture
	// (fallout.go).
	return &cfg.Dyninst{FallOut: isa.For(m) != nil, Tables: true, TailCalls: true, Decode: p.decode(m)}
}

// Loader is lopt with the image read as the policy's tool reads it, or
// as bloop reads it under no policy.
func (p *Policy) Loader(lopt loader.Options) loader.Options {
	on := p != nil
	// hpcstruct prints file names as Dyninst spells them, uncleaned: a
	// header reached through two spellings is two F elements.
	lopt.RawFileNames = on
	lopt.DyninstPLTNames = on
	lopt.DyninstStubs = on
	lopt.DyninstLineSites = on
	lopt.DyninstDeclNames = on
	return lopt
}

// Parse is what building an image's graphs under a policy takes: the
// calls known never to return, the answers of the procedure table (Parse
// is the graphs' cfg.Oracle) and cfg's policy. Under no policy it is the
// default mode's.
type Parse struct {
	img     *loader.Image
	policy  *Policy
	dy      *cfg.Dyninst
	named   map[uint64]bool   // the entries of the procedures named noreturn (NoReturnAddrs)
	noret   func(uint64) bool // whether a call never returns: named, and as the parse found (Settle)
	callers *callTargets      // under a policy: the procedures direct calls enter
	memo    *parseMemo        // the parses of earlier rounds of procedure discovery
}

// Parse is the parse of img under p, with the names that say which calls
// never return.
func (p *Policy) Parse(img *loader.Image) *Parse {
	named := p.NoReturnAddrs(img)
	ps := &Parse{img: img, policy: p, dy: p.CFG(img.Machine), named: named, noret: func(a uint64) bool { return named[a] }}
	if p != nil {
		ps.callers = &callTargets{img: img}
	}
	return ps
}

// Options are the options every procedure's graph is built with, the
// return analysis's included (it must see the graphs Dyninst parses).
func (ps *Parse) Options() cfg.Options {
	return cfg.Options{NoReturn: ps.noret, Procs: ps, LandingPad: ps.img.PadFor, Dyninst: ps.dy}
}

// Settle completes a policy's parse with what Dyninst's parse of every
// procedure finds: the procedures that never return, and those whose
// parse may run into another's entry (returned). The discovery that
// found t's procedures (Policy.Procedures) has them already; a table
// without them is parsed now. Under no policy it does nothing.
func (ps *Parse) Settle(t *procs.Table, workers int) (runsOn map[uint64]bool) {
	if ps.policy == nil {
		return nil
	}
	var noRet map[uint64]bool
	if t != nil && t.NoReturn != nil {
		noRet, runsOn = t.NoReturn, t.RunsOn
		if t.CallTargets != nil {
			ps.callers.preset(t.CallTargets)
		}
	} else {
		f := ps.Facts(workers)
		noRet, runsOn = f.NoReturn, f.RunsOn
	}
	if len(noRet) > 0 {
		named := ps.noret
		ps.noret = func(a uint64) bool { return named(a) || noRet[a] }
	}
	return runsOn
}
