package loader

import (
	"path/filepath"
	"sync"
)

// realPaths spells file names as hpcstruct prints them
// (Options.RawFileNames), one cache per image shared by its unit walks.
// hpcstruct passes Dyninst's names through realpath(3): a file that exists
// where it runs gets its resolved, clean name; any other keeps its
// uncleaned spelling. So on a machine with GCC 12's headers, clang's
// /usr/bin/../lib/gcc/x86_64-linux-gnu/12/../../../../include/c++/12/bits/
// names become /usr/include/c++/12/bits/ (tmpl-clang14-O2's reference),
// while libstdc++'s /build/.../libsupc++/../../../../src/ names and
// libgsl's ./matrix/../gsl/ ones stay as they are. Only absolute names
// are resolved, so that the output does not depend on the working
// directory.
type realPaths struct{ m sync.Map }

// spell is the name hpcstruct prints for a file table entry of libdw's
// spelling (dwarfscan.RawLineProgram) in a unit with DW_AT_comp_dir
// compDir.
func (r *realPaths) spell(name, compDir string) string {
	name = rawAbsFile(name, compDir)
	if name == "" || name[0] != '/' {
		return name
	}
	if v, ok := r.m.Load(name); ok {
		return v.(string)
	}
	real := name
	if p, err := filepath.EvalSymlinks(name); err == nil && filepath.IsAbs(p) {
		real = p
	}
	v, _ := r.m.LoadOrStore(name, real)
	return v.(string)
}

// rawAbsFile is what Dyninst makes of a name from libdw that is still
// relative: DW_AT_comp_dir, "/" and the name, without cleaning, even when
// DW_AT_comp_dir is relative too. So a DWARF 5 unit with DW_AT_comp_dir
// "./matrix", whose directory entry 0 repeats it, names its source
// ./matrix/./matrix/init.c and a header in entry "../gsl"
// ./matrix/../gsl/gsl_matrix_double.h, as hpcstruct prints them.
func rawAbsFile(name, compDir string) string {
	if name == "" || name[0] == '/' || compDir == "" {
		return name
	}
	return compDir + "/" + name
}

// fileIn is the name of a file table entry: real's spelling when it is
// set (the line program was read raw), else absFile's.
func fileIn(name, compDir string, real *realPaths) string {
	if real != nil {
		return real.spell(name, compDir)
	}
	return absFile(name, compDir)
}
