package profile

import (
	"fmt"
	"os"
	"strings"

	"bloop/sample"
	"bloop/structure"
)

// A Source is one kind of input a profile is built from: bloop's own
// recordings, perf.data files, HPCToolkit measurement directories. Each
// reads what comes before the samples (events, modules, threads) into
// the profile, then gives every sample as a Path, placed in its modules,
// to the one insertion.
type Source interface {
	// prepare reads all but the samples into p (p.sp is the address
	// space to open modules in).
	prepare(p *Profile) error
	// paths passes each sample's path to add.
	paths(p *Profile, add func(Path)) error
}

// Open picks the source of path by its content: an HPCToolkit
// measurement directory, a perf.data file, else a bloop recording.
func Open(path string) (Source, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return &measurements{dir: path}, nil
	}
	perf, err := sample.IsPerfFile(path)
	if err != nil {
		return nil, err
	}
	if perf {
		return &recording{path: path, scan: sample.ScanPerf, skim: sample.SkimPerf, skimKept: true, lazy: sample.ScanPerfLazy, openParts: openPerfParts}, nil
	}
	return &recording{path: path, scan: sample.ScanFile, skim: sample.SkimFile}, nil
}

// openPerfParts opens a perf.data file to be read in parts.
func openPerfParts(path string, parts sample.Parts) (partReader, error) {
	return sample.OpenPerfParts(path, parts)
}

// Build reads and attributes a recording: bloop's own, a perf.data file,
// or an HPCToolkit measurement directory.
func Build(path string, opt Options) (*Profile, error) {
	src, err := Open(path)
	if err != nil {
		return nil, err
	}
	return BuildFrom(src, opt)
}

// BuildFrom reads and attributes the samples of src.
func BuildFrom(src Source, opt Options) (*Profile, error) {
	p := newProfile(opt)
	p.sp = newSpaceFor(opt)
	defer p.sp.close()
	if err := src.prepare(p); err != nil {
		return nil, err
	}
	if err := src.paths(p, p.insert); err != nil {
		return nil, err
	}
	if p.deferScopes {
		if !p.opt.WholeModules {
			p.analyseSampled()
		}
		p.fileStacks()
	}
	p.Modules = p.sp.sortedModules()
	p.Warnings = append(p.Warnings, p.sp.warnings...)
	p.sp.saveRecipes()
	return p, nil
}

// selectEvent sets the event the trees hold: the one named, else the
// first; path names the recording in errors.
func (p *Profile) selectEvent(path, name string) error {
	names := p.Meta.EventNames()
	p.EventSamples = make([]uint64, len(names))
	p.EventTotals = make([]uint64, len(names))
	p.stacks.events = len(names)
	if name == "" {
		return nil
	}
	for i, n := range names {
		if n == name {
			p.Event = i
			return nil
		}
	}
	// "cpu-clock" names "cpu-clock:ppp" when only one event has that base.
	match := -1
	for i, n := range names {
		if BaseEventName(n) == name {
			if match >= 0 {
				match = -2
				break
			}
			match = i
		}
	}
	if match >= 0 {
		p.Event = match
		return nil
	}
	return fmt.Errorf("%s: no event %q (it has %s)", path, name, strings.Join(names, ", "))
}

// structLMs reads the load modules of structure files; a file that
// cannot be read goes to bad, whose error stops the reading (nil: the
// file is left out).
func structLMs(files []string, bad func(error) error) ([]structLM, error) {
	var lms []structLM
	for _, f := range files {
		doc, err := structure.ParseFile(f)
		if err != nil {
			if err := bad(err); err != nil {
				return nil, err
			}
			continue
		}
		lms = append(lms, indexDoc(doc)...)
	}
	return lms, nil
}
