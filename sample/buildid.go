package sample

import (
	"debug/elf"

	"bloop/loader"
)

// buildIDs writes, once per file, the build-id note of each file the
// recorded program maps, read then: a report made after the file was
// rebuilt, or on a machine without it, can tell and fetch the one that
// ran.
type buildIDs struct {
	seen map[string]bool
}

// write writes path's build-id, the first time path is seen; a file
// without one, or not an ELF file (anonymous and special mappings), is
// written nothing.
func (b *buildIDs) write(w *Writer, path string) {
	if len(path) == 0 || path[0] != '/' || b.seen[path] {
		return
	}
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	b.seen[path] = true
	f, err := elf.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if id := loader.BuildID(f); len(id) > 0 {
		w.BuildID(BuildID{Path: path, ID: id})
	}
}
