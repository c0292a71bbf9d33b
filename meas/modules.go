// Package meas reads HPCToolkit measurement directories: from the load
// maps of their .hpcrun profiles (package hpcrun), the load modules whose
// structure hpcprof wants (hpcstruct's measurement-directory mode).
package meas

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"bloop/hpcrun"
	"bloop/loader"
)

// Module is a load module to analyse.
type Module struct {
	// Path is the module's path as hpcrun recorded it: the name its
	// structure file must carry for hpcprof to use it.
	Path string
	// File is where the binary is read: Path, or for a [vdso] copy the
	// file in this directory's vdso/ when the directory has moved since
	// the run.
	File string
	// Out is the structure file's name inside structs/.
	Out string
}

// Skipped is a load module that is not analysed, and why.
type Skipped struct {
	Path, Reason string
}

// Dir is what a measurement directory asks for.
type Dir struct {
	Path     string
	Profiles []string // the .hpcrun files read
	// Chosen are the modules hpcstruct would list in all.lm, with the
	// structure file each gets; Modules are those whose file exists.
	Chosen   []Module
	Modules  []Module  // to analyse, in load-map order
	Skipped  []Skipped // flagged but not analysable
	Warnings []string  // profiles whose load map could not be read
}

// StructsDir is where hpcprof looks for structure files.
func StructsDir(dir string) string { return filepath.Join(dir, "structs") }

// IsMeasurementDir reports whether dir holds hpcrun profiles.
func IsMeasurementDir(dir string) bool {
	ps, _ := Profiles(dir)
	return len(ps) > 0
}

// Profiles lists the .hpcrun files directly in dir, by name; hpcrun
// writes none in subdirectories.
func Profiles(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var ps []string
	for _, e := range ents {
		if filepath.Ext(e.Name()) == ".hpcrun" && e.Type().IsRegular() {
			ps = append(ps, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(ps)
	return ps, nil
}

// Read reads the load maps of dir's profiles and chooses the modules as
// hpcstruct does: those flagged for analysis, except hpcrun's
// placeholders ("<...>" names) and logical modules ("/logical/"); each
// path once. Two modules with one base name both get a structure file
// (hpcstruct skips the second); files that no longer exist are skipped
// with their reason.
//
// sysroot, when not "", holds the recording machine's files: a module is
// read from sysroot plus its recorded path when that exists (Locate).
func Read(dir, sysroot string) (*Dir, error) {
	ps, err := Profiles(dir)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%s: no .hpcrun profiles: not an hpcrun measurement directory", dir)
	}
	d := &Dir{Path: dir, Profiles: ps}
	seen := map[string]bool{}
	var paths []string
	for _, p := range ps {
		es, err := hpcrun.ReadLoadMap(p)
		if err != nil {
			d.Warnings = append(d.Warnings, fmt.Sprintf("unable to read the load map: %v", err))
			continue
		}
		for _, e := range es {
			if e.Flags&hpcrun.FlagAnalyze == 0 || strings.HasPrefix(e.Path, "<") || strings.Contains(e.Path, "/logical/") || seen[e.Path] {
				continue
			}
			seen[e.Path] = true
			paths = append(paths, e.Path)
		}
	}
	names := map[string]int{}
	for _, p := range paths {
		if strings.Contains(p, "gpubin") {
			d.Skipped = append(d.Skipped, Skipped{p, "GPU binaries of a measurement are not analysed yet (run bloop struct on the cubin)"})
			continue
		}
		base := filepath.Base(p)
		names[base]++
		out := base + ".hpcstruct"
		if n := names[base]; n > 1 {
			out = base + "-" + strconv.Itoa(n) + ".hpcstruct"
		}
		file, ok := Locate(dir, sysroot, p)
		d.Chosen = append(d.Chosen, Module{Path: p, File: file, Out: out})
		if !ok {
			why := "no longer exists (or is empty)"
			if sysroot != "" {
				why = "neither under " + sysroot + " nor at its path (or empty)"
			}
			d.Skipped = append(d.Skipped, Skipped{p, why})
			continue
		}
		d.Modules = append(d.Modules, d.Chosen[len(d.Chosen)-1])
	}
	return d, nil
}

// Locate finds the binary of a recorded path: sysroot plus the path when
// sysroot is given and that file exists (a measurement taken on another
// machine, its files copied under sysroot: this machine's own file at the
// path may be another build), else the path itself, or for a vdso copy
// recorded under the measurement directory's old name, the copy in its
// vdso/ now.
func Locate(dir, sysroot, p string) (string, bool) {
	if alt, ok := loader.InSysroot(sysroot, p); ok {
		return alt, true
	}
	if regularNonEmpty(p) {
		return p, true
	}
	if filepath.Ext(p) == ".vdso" && filepath.Base(filepath.Dir(p)) == "vdso" {
		alt := filepath.Join(dir, "vdso", filepath.Base(p))
		if st, err := os.Stat(alt); err == nil && st.Mode().IsRegular() {
			return alt, true
		}
	}
	return "", false
}

// StructFiles lists the structure files hpcprof reads for dir: the
// entries of structs/ named *.hpcstruct, whatever their module (the LM
// inside says which), subdirectories not searched.
func StructFiles(dir string) []string {
	ents, err := os.ReadDir(StructsDir(dir))
	if err != nil {
		return nil
	}
	var fs []string
	for _, e := range ents {
		if filepath.Ext(e.Name()) == ".hpcstruct" && !e.IsDir() {
			fs = append(fs, filepath.Join(StructsDir(dir), e.Name()))
		}
	}
	return fs
}

func regularNonEmpty(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Size() > 0
}
