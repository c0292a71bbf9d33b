package diff

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"bloop/par"
	"bloop/structure"
)

// Directory diffs (bloop diff DIR_A DIR_B): both trees are walked, the
// structure files among their files are recognised by content (IsStructure),
// paired by relative path and each pair diffed by Diff, as two files are.

// DirReport is the result of DiffDirs. Paths are relative to the operands,
// slash-separated, sorted byte-wise.
type DirReport struct {
	Version int         `json:"version"`
	A       string      `json:"a"`
	B       string      `json:"b"`
	Options DiffOptions `json:"options"`
	Totals  DirTotals   `json:"totals"`
	// Pairs: every pair of structure files both read, equal or not.
	Pairs []PairReport `json:"pairs"`
	// OnlyInA and OnlyInB: structure files whose relative path has no
	// structure file in the other tree.
	OnlyInA []string `json:"only_in_a"`
	OnlyInB []string `json:"only_in_b"`
	// Errors: files that could not be read or parsed (their pair is not
	// diffed), and directories that could not be listed.
	Errors []FileError `json:"errors"`
	// Ignored: the files that are not structure files, as operand/rel.
	Ignored []string `json:"ignored"`
}

// PairReport is the diff of the two files at one relative path.
type PairReport struct {
	Path   string  `json:"path"`
	Equal  bool    `json:"equal"` // Report.Equal()
	Report *Report `json:"report"`
}

// FileError is a file or directory that could not be read or parsed.
type FileError struct {
	Path    string `json:"path"`    // relative to its operand
	Message string `json:"message"` // one line, naming the file (and line) as ParseFile's errors do
}

// DirTotals counts the pairs and files of a DirReport and sums the
// summaries of its pairs (the Summary fields appear at the same level in
// JSON, under the names a single pair's summary has).
type DirTotals struct {
	Pairs       int `json:"pairs"`
	PairsDiffer int `json:"pairs_differ"`
	OnlyInA     int `json:"only_in_a"`
	OnlyInB     int `json:"only_in_b"`
	Errors      int `json:"errors"`
	Ignored     int `json:"ignored"`
	Summary
}

// Equal reports whether both trees have the same structure files and
// every pair is equal (errors aside: see Errors).
func (r *DirReport) Equal() bool {
	return r.Totals.PairsDiffer == 0 && len(r.OnlyInA) == 0 && len(r.OnlyInB) == 0
}

// DiffDirs pairs the structure files under directories a and b by
// relative path and diffs each pair with Diff, on up to jobs goroutines
// (the report's order does not depend on them). A file that cannot be
// read or parsed, or a subdirectory that cannot be listed, is an entry of
// Errors and the rest is still compared; the error is only for an operand
// that cannot be listed at all.
func DiffDirs(a, b string, opts DiffOptions, jobs int) (*DirReport, error) {
	r := &DirReport{Version: ReportVersion, A: a, B: b, Options: opts,
		Pairs: []PairReport{}, OnlyInA: []string{}, OnlyInB: []string{}, Errors: []FileError{}, Ignored: []string{}}
	var trees [2]tree
	for i, root := range []string{a, b} {
		t, err := walkTree(root)
		if err != nil {
			return nil, err
		}
		trees[i] = t
	}
	// Recognise the structure files of both trees.
	type cand struct {
		side int
		rel  string
	}
	var cands []cand
	for side, t := range trees {
		for _, rel := range t.files {
			cands = append(cands, cand{side, rel})
		}
		r.Errors = append(r.Errors, t.errs...)
		r.Ignored = append(r.Ignored, t.ignored...)
	}
	isStruct := make([]bool, len(cands))
	sniffErr := make([]error, len(cands))
	par.For(jobs, len(cands), func(i int) {
		c := cands[i]
		isStruct[i], sniffErr[i] = IsStructure(filepath.Join(trees[c.side].root, filepath.FromSlash(c.rel)))
	})
	var found [2]map[string]bool
	for side := range found {
		found[side] = map[string]bool{}
	}
	for i, c := range cands {
		p := filepath.Join(trees[c.side].root, filepath.FromSlash(c.rel))
		switch {
		case sniffErr[i] != nil:
			r.Errors = append(r.Errors, FileError{Path: c.rel, Message: sniffErr[i].Error()})
		case isStruct[i]:
			found[c.side][c.rel] = true
		default:
			r.Ignored = append(r.Ignored, p)
		}
	}
	var rels []string
	for rel := range found[0] {
		if found[1][rel] {
			rels = append(rels, rel)
		} else {
			r.OnlyInA = append(r.OnlyInA, rel)
		}
	}
	for rel := range found[1] {
		if !found[0][rel] {
			r.OnlyInB = append(r.OnlyInB, rel)
		}
	}
	slices.Sort(rels)
	slices.Sort(r.OnlyInA)
	slices.Sort(r.OnlyInB)

	// Diff the pairs; each job keeps two parsed files at a time.
	reports := make([]*Report, len(rels))
	errs := make([][]FileError, len(rels))
	par.For(jobs, len(rels), func(i int) {
		var docs [2]*structure.Doc
		for side := range docs {
			d, err := structure.ParseFile(filepath.Join(trees[side].root, filepath.FromSlash(rels[i])))
			if err != nil {
				errs[i] = append(errs[i], FileError{Path: rels[i], Message: err.Error()})
			}
			docs[side] = d
		}
		if errs[i] == nil {
			reports[i] = Diff(docs[0], docs[1], opts)
		}
	})
	for i, rel := range rels {
		r.Errors = append(r.Errors, errs[i]...)
		if reports[i] != nil {
			r.Pairs = append(r.Pairs, PairReport{Path: rel, Equal: reports[i].Equal(), Report: reports[i]})
		}
	}
	slices.SortStableFunc(r.Errors, func(x, y FileError) int { return strings.Compare(x.Path, y.Path) })
	slices.Sort(r.Ignored)
	r.summarize()
	return r, nil
}

func (r *DirReport) summarize() {
	t := DirTotals{Pairs: len(r.Pairs), OnlyInA: len(r.OnlyInA), OnlyInB: len(r.OnlyInB),
		Errors: len(r.Errors), Ignored: len(r.Ignored)}
	for _, p := range r.Pairs {
		if !p.Equal {
			t.PairsDiffer++
		}
		t.Summary.add(p.Report.Summary)
	}
	r.Totals = t
}

// tree is one operand's files, relative to root and slash-separated, in
// walk order; ignored holds what is not a regular file (as root/rel).
type tree struct {
	root    string
	files   []string
	ignored []string
	errs    []FileError
}

// walkTree lists the regular files under root. Symbolic links to regular
// files count as files; links to directories are not followed (a tree
// with a link to its parent would never end) and, like devices, sockets
// and pipes, are ignored.
func walkTree(root string) (tree, error) {
	t := tree{root: root}
	if _, err := os.ReadDir(root); err != nil {
		return t, err
	}
	var walk func(rel string)
	walk = func(rel string) {
		dir := filepath.Join(root, filepath.FromSlash(rel))
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.errs = append(t.errs, FileError{Path: rel, Message: err.Error()})
			return
		}
		for _, e := range entries {
			r := path.Join(rel, e.Name())
			switch {
			case e.IsDir():
				walk(r)
			case e.Type().IsRegular():
				t.files = append(t.files, r)
			case e.Type()&fs.ModeSymlink != 0:
				if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && fi.Mode().IsRegular() {
					t.files = append(t.files, r)
				} else {
					t.ignored = append(t.ignored, filepath.Join(root, filepath.FromSlash(r)))
				}
			default:
				t.ignored = append(t.ignored, filepath.Join(root, filepath.FromSlash(r)))
			}
		}
	}
	walk(".")
	return t, nil
}

// sniffLimit bounds what IsStructure reads: a structure file says what it
// is in its first few kilobytes (XML: the DOCTYPE, about 1.5 KB, then the
// root element; JSON: "version", then "modules"). Other files are mostly
// told by their first byte.
const sniffLimit = 1 << 20

// IsStructure reports whether the file at path is a structure file, by
// its content, refining the test Parse makes (the first non-blank byte):
// hpcstruct XML when it starts with '<' and its first element, or its
// DOCTYPE, is HPCToolkitStructure; bloop's JSON when it starts with '{'
// and its top-level object has a "modules" member (as Parse reads it,
// whatever the case of its letters). A file that passes may still be
// malformed further on (Parse says where); other XML and JSON (HTML, a
// manifest, a build's other outputs) and other files do not pass. The
// error is for a file that cannot be read; it names the file.
func IsStructure(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	r := &readErr{r: io.LimitReader(f, sniffLimit)}
	ok := sniff(bufio.NewReader(r))
	if r.err != nil {
		return false, fmt.Errorf("%s: read: %w", path, r.err)
	}
	return ok, nil
}

// readErr remembers the first error of r other than io.EOF: the decoders
// IsStructure uses would take it for malformed input.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

var (
	xmlRoot    = []byte("<" + structure.RootTag)
	xmlDoctype = []byte("<!DOCTYPE " + structure.RootTag)
)

// sniff reads from r only what it needs to tell.
func sniff(r *bufio.Reader) bool {
	var first byte
	for {
		b, err := r.ReadByte()
		if err != nil {
			return false
		}
		if b != ' ' && b != '\t' && b != '\r' && b != '\n' {
			first = b
			r.UnreadByte()
			break
		}
	}
	switch first {
	case '<':
		// The bytes the decoder has read, to look at where it failed.
		var seen bytes.Buffer
		dec := xml.NewDecoder(io.TeeReader(r, &seen))
		dec.Strict = true
		dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
		for {
			off := dec.InputOffset()
			tok, err := dec.RawToken()
			if err != nil {
				// Cut or broken before the first element: a structure
				// file if that is where its DOCTYPE or root starts.
				rest := seen.Bytes()[min(int(off), seen.Len()):]
				return bytes.HasPrefix(rest, xmlDoctype) || bytes.HasPrefix(rest, xmlRoot)
			}
			switch t := tok.(type) {
			case xml.StartElement:
				return t.Name.Space == "" && t.Name.Local == structure.RootTag
			case xml.Directive:
				f := strings.Fields(string(t))
				if len(f) >= 2 && f[0] == "DOCTYPE" {
					return strings.TrimSuffix(f[1], "[") == structure.RootTag
				}
			case xml.CharData:
				if len(bytes.TrimSpace(t)) > 0 {
					return false
				}
			}
		}
	case '{':
		dec := json.NewDecoder(r)
		if _, err := dec.Token(); err != nil {
			return false
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return false
			}
			if k, ok := tok.(string); ok && strings.EqualFold(k, "modules") {
				return true
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return false
			}
		}
	}
	return false
}

// ErrMixedOperands is BothDirs' error for a directory and a file.
var ErrMixedOperands = errors.New("give two structure files or two directories")

// BothDirs reports whether a and b are both directories (true) or not
// (false: files, for ParseFile, which also says when one is missing). A
// directory and a file is an error wrapping ErrMixedOperands; a directory
// and a path that cannot be found is that one's error.
func BothDirs(a, b string) (bool, error) {
	var isDir [2]bool
	var errs [2]error
	for i, p := range []string{a, b} {
		fi, err := os.Stat(p)
		isDir[i], errs[i] = err == nil && fi.IsDir(), err
	}
	if isDir[0] == isDir[1] {
		return isDir[0], nil
	}
	i := 0 // the one that is not a directory
	if isDir[0] {
		i = 1
	}
	if errs[i] != nil {
		return false, errs[i]
	}
	ops := []string{a, b}
	return false, fmt.Errorf("%s is a directory and %s is not: %w", ops[1-i], ops[i], ErrMixedOperands)
}
