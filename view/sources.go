package view

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"bloop/loader"
	"bloop/profile"
	"bloop/source"
	"bloop/structfile"
)

// File is one source file of the page: its path as the line table names
// it (string index), where it was read, and its text; or, when it could
// not be embedded, why (Note).
type File struct {
	Path  int    `json:"path"`
	Found string `json:"found,omitempty"`
	Text  string `json:"text,omitempty"`
	Note  string `json:"note,omitempty"`
}

// Replacement rewrites source paths that start with Old to start with New
// (bloop struct's -R): structfile's, applied as structfile applies it.
type Replacement = structfile.Replacement

// Options say where the report page's sources are.
type Options struct {
	// SourceDirs are searched for sources not found at the line table's
	// path: by path below the directory, then by base name; DIR/*
	// searches DIR's whole tree by base name (bloop struct's -I).
	SourceDirs []string
	// Replace is applied to the line table's paths before they are
	// looked for, the first matching prefix only.
	Replace []Replacement
	// Fetcher, when set, is asked for a source file found nowhere here,
	// by its line table path (absolute) and the build-id of a module
	// whose line table names it (a debuginfod client).
	Fetcher SourceFetcher
	// BuildIDs are the build-ids Fetcher is asked by on the structure
	// and diff pages (their modules'); the report page asks by the
	// build-ids of the modules its samples reach.
	BuildIDs [][]byte
}

// SourceFetcher fetches a source file by build-id and path (package
// debuginfod's Client); it returns the path of its copy.
type SourceFetcher interface {
	Source(buildID []byte, path string) (string, error)
}

// Files larger than this are not embedded (a generated source of many
// megabytes would make the page too slow to open); the pane says so.
const maxSourceBytes = 2 << 20

// AddSources embeds the source files that samples reach (the lines of
// the merged tree), each once, in path order. A file that cannot be
// found or read gets a note saying so instead of its text.
func (d *ReportData) AddSources(o Options) {
	paths := map[string]bool{}
	if len(d.Threads) > 0 {
		for _, f := range d.Threads[0].Lines.File {
			paths[d.Strings[f]] = true
		}
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		if p != "" {
			sorted = append(sorted, p)
		}
	}
	sort.Strings(sorted)
	idx := map[string]int{}
	for i, s := range d.Strings {
		idx[s] = i
	}
	finder := &source.Finder{Dirs: o.SourceDirs}
	for _, p := range sorted {
		d.Files = append(d.Files, readSource(finder, o, p, idx[p], d.sourceIDs[p]))
	}
}

// sourceBuildIDs maps each file the profile's statements name to the
// build-ids of the modules whose procedures hold them: what a source is
// fetched by.
func sourceBuildIDs(p *profile.Profile) map[string][][]byte {
	byName := map[string][][]byte{}
	for _, m := range p.Modules {
		if len(m.BuildID) > 0 {
			byName[m.Name] = append(byName[m.Name], m.BuildID)
		}
	}
	out := map[string][][]byte{}
	seen := map[[2]string]bool{}
	var walk func(n *profile.Node, mod string)
	walk = func(n *profile.Node, mod string) {
		if e := n.Elem; e != nil {
			if e.Kind == profile.ElemProc {
				mod = e.Module
			}
			if k := [2]string{e.File, mod}; e.Kind == profile.ElemStmt && e.File != "" && !seen[k] {
				seen[k] = true
				out[e.File] = append(out[e.File], byName[mod]...)
			}
		}
		for _, c := range n.Children {
			walk(c, mod)
		}
	}
	if p.Root != nil {
		walk(p.Root, "")
	}
	return out
}

// readSource reads the source file path of the page (string index idx):
// on this machine, else from o.Fetcher by one of ids.
func readSource(finder *source.Finder, o Options, path string, idx int, ids [][]byte) File {
	want := structfile.ReplacePath(o.Replace, path)
	f := File{Path: idx}
	found := finder.Path(want)
	if found == "" {
		found = fetchSource(o.Fetcher, path, ids)
	}
	if found == "" {
		f.Note = want + ": not found"
		return f
	}
	st, err := os.Stat(found)
	if err == nil && st.Size() > maxSourceBytes {
		f.Note = fmt.Sprintf("%s: %d bytes, too large to embed (the limit is %d)", found, st.Size(), maxSourceBytes)
		return f
	}
	text, err := os.ReadFile(found)
	if err != nil {
		f.Note = fmt.Sprintf("reading source: %v", err)
		return f
	}
	f.Found = found
	f.Text = string(text)
	if !utf8.Valid(text) {
		f.Text = strings.ToValidUTF8(f.Text, "\uFFFD")
	}
	return f
}

// BuildIDOf is the build-id note of the ELF file path: what a page asks
// a module's sources by (Options.BuildIDs). nil when path is no ELF file
// here, or one without a note.
func BuildIDOf(path string) (id []byte) {
	defer func() {
		if recover() != nil {
			id = nil // debug/elf on a damaged file: no build-id
		}
	}()
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	return loader.BuildID(f)
}

// fetchSource asks fetcher for path by each build-id in turn; "" when
// none has it. Only absolute paths are asked: debuginfod serves no other.
func fetchSource(fetcher SourceFetcher, path string, ids [][]byte) string {
	if fetcher == nil || !filepath.IsAbs(path) {
		return ""
	}
	for _, id := range ids {
		if p, err := fetcher.Source(id, path); err == nil {
			return p
		}
	}
	return ""
}
