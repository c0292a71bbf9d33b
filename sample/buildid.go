package sample

import (
	"debug/elf"

	"bloop/loader"
)

// buildIDs gathers the files the recorded program maps, and writes the
// build-id note of each at the end of the run: a report made after a file
// was rebuilt, or on a machine without it, can tell and fetch the one
// that ran. The notes are read after the sampling loop, never in it, so
// that a program mapping many files (an interpreter importing its
// extension modules) loses no samples to the reads.
type buildIDs struct {
	seen  map[string]bool
	paths []string
}

// add notes path, once; anonymous and special mappings ([vdso]) have no
// file to read. A converter without a set (its tests') notes nothing.
func (b *buildIDs) add(path string) {
	if b == nil || len(path) == 0 || path[0] != '/' || b.seen[path] {
		return
	}
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	b.seen[path] = true
	b.paths = append(b.paths, path)
}

// write writes the build-id of each file added, in the order they were
// mapped; a file without one, or no longer an ELF file, gets none.
func (b *buildIDs) write(w *Writer) {
	for _, p := range b.paths {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		if id := loader.BuildID(f); len(id) > 0 {
			w.BuildID(BuildID{Path: p, ID: id})
		}
		f.Close()
	}
}
