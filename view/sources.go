package view

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

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
		d.Files = append(d.Files, readSource(finder, o.Replace, p, idx[p]))
	}
}

func readSource(finder *source.Finder, repl []Replacement, path string, idx int) File {
	want := structfile.ReplacePath(repl, path)
	f := File{Path: idx}
	found := finder.Path(want)
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
