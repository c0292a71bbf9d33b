// Package source reads program sources that a binary's line table names, to
// find the lines where loops are written: compilers often give a loop's
// branches the line of its last statement (gfortran DO loops, rotated C
// loops) and emit no code at all on the loop statement's own line.
package source

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Finder maps line-table file names to readable sources and caches the
// loop header lines found in them.
type Finder struct {
	// Dirs are extra directories to look in, by path suffix and base
	// name; one that ends in "/*" is searched recursively by base name
	// (hpcstruct's -I spelling).
	Dirs []string
	// Fetcher, when set, is asked by BuildID for an absolute file that is
	// neither on disk nor under Dirs (a debuginfod client); nil: disk only.
	Fetcher Fetcher
	// BuildID is the build-id of the module whose line table names the
	// files: what Fetcher is asked by (none: Fetcher is not asked).
	BuildID []byte

	mu     sync.Mutex
	cache  map[string]*loops
	probed map[string]bool              // paths looked at -> found
	trees  map[string]map[string]string // recursive root -> base name -> first path
}

// loops are the loop statements of one source file.
type loops struct {
	lines []int       // header lines, ascending
	tails map[int]int // the while line of a do-while -> its do line
}

// LoopLines returns the sorted header lines of the loops written in file,
// or nil when the file cannot be found or is of an unknown language.
func (f *Finder) LoopLines(file string) []int { return f.loops(file).lines }

// DoLine returns the do line of the do-while loop whose closing while is
// on line ln of file.
func (f *Finder) DoLine(file string, ln int) (int, bool) {
	d, ok := f.loops(file).tails[ln]
	return d, ok
}

func (f *Finder) loops(file string) *loops {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cache == nil {
		f.cache = map[string]*loops{}
	}
	if ls, ok := f.cache[file]; ok {
		return ls
	}
	ls := &loops{}
	if p := f.find(file); p != "" {
		ls = scanAs(file, p)
	}
	f.cache[file] = ls
	return ls
}

func (f *Finder) find(file string) string {
	if f.probed == nil {
		f.probed = map[string]bool{}
	}
	cands := []string{file}
	for _, d := range f.Dirs {
		if root, ok := strings.CutSuffix(d, "/*"); ok {
			if p := f.tree(root)[filepath.Base(file)]; p != "" {
				cands = append(cands, p)
			}
			continue
		}
		cands = append(cands, filepath.Join(d, file), filepath.Join(d, filepath.Base(file)))
	}
	for _, c := range cands {
		st, err := os.Stat(c)
		found := err == nil && st.Mode().IsRegular()
		f.probed[c] = found
		if found {
			return c
		}
	}
	return f.fetch(file)
}

// fetch returns Fetcher's copy of file, "" when there is none. The copy
// counts as read, so that an output made from it is stale when the copy
// changes or disappears, and valid while it stays the same.
func (f *Finder) fetch(file string) string {
	if f.Fetcher == nil || len(f.BuildID) == 0 || !filepath.IsAbs(file) {
		return ""
	}
	p, err := f.Fetcher.Source(f.BuildID, file)
	if err != nil || p == "" {
		return ""
	}
	f.probed[p] = true
	return p
}

// tree indexes the regular files under root by base name, the first in
// lexical walk order winning, once per root.
func (f *Finder) tree(root string) map[string]string {
	if f.trees == nil {
		f.trees = map[string]map[string]string{}
	}
	if t, ok := f.trees[root]; ok {
		return t
	}
	t := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if _, ok := t[d.Name()]; !ok {
				t[d.Name()] = p
			}
		}
		return nil
	})
	f.trees[root] = t
	return t
}

// Probed returns the paths the finder looked at, sorted: the sources it
// read and the candidates that did not exist. An output that depends on
// the sources is stale when any of them changes, appears or disappears.
func (f *Finder) Probed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ps []string
	for p := range f.probed {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

var (
	fortranDo = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^\s*(\d+\s+)?([a-z_]\w*\s*:\s*)?do(\s+(while\b|concurrent\b|\d|[a-z_]\w*\s*=)|\s*$)`)
	})
	cToken = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(for|while|do)\b|[{}]`) })
)

// scan finds loop statements lexically: DO statements in Fortran; for,
// while and do keywords in C and C++ (comments, strings and preprocessor
// lines removed). The while that closes a do-while is not a loop of its
// own: it is recorded as the tail of its do.
func scan(path string) *loops { return scanAs(path, path) }

// scanAs is scan of the file at path in the language that the name's
// extension says: a fetched copy's name (elfutils' escaped
// "source##dir##f.c") may not end as the line table's does.
func scanAs(name, path string) *loops {
	ext := strings.ToLower(filepath.Ext(name))
	fortran := false
	switch ext {
	case ".f", ".f90", ".f95", ".f03", ".f08", ".for":
		fortran = true
	case ".c", ".cc", ".cpp", ".cxx", ".c++", ".h", ".hh", ".hpp", ".hxx", ".inl", ".tcc", ".cl", ".hip":
	default:
		if ext != "" {
			return &loops{}
		}
	}
	fh, err := os.Open(path)
	if err != nil {
		return &loops{}
	}
	defer fh.Close()
	if fortran {
		out, _ := FortranLoops(fh)
		return &loops{lines: out}
	}
	return cLoops(fh)
}

// cLoops pairs each do with the while at its brace depth that closes it.
func cLoops(r io.Reader) *loops {
	ls := &loops{tails: map[int]int{}}
	type open struct{ line, depth int }
	var dos []open
	depth := 0
	seen := map[int]bool{}
	sc := lineScanner(r)
	inComment, macro := false, false
	for n := 1; sc.Scan(); n++ {
		var line string
		line, inComment = stripC(sc.Text(), inComment)
		// Preprocessor lines, with their continuations, are not statements.
		if macro || strings.HasPrefix(strings.TrimSpace(line), "#") {
			macro = strings.HasSuffix(strings.TrimRight(line, " \t"), "\\")
			continue
		}
		for _, tok := range cToken().FindAllString(line, -1) {
			switch tok {
			case "{":
				depth++
			case "}":
				depth--
			case "while":
				if k := len(dos) - 1; k >= 0 && dos[k].depth == depth {
					ls.tails[n] = dos[k].line
					dos = dos[:k]
					continue
				}
				fallthrough
			default:
				if tok == "do" {
					dos = append(dos, open{n, depth})
				}
				if !seen[n] {
					seen[n] = true
					ls.lines = append(ls.lines, n)
				}
			}
		}
	}
	sort.Ints(ls.lines)
	return ls
}

// FortranLoops returns the lines of the DO statements in Fortran source r,
// ascending. In Fortran the DO statement is the loop, so this lexical scan
// is exact; bloop eval uses it as ground truth too.
func FortranLoops(r io.Reader) ([]int, error) {
	var out []int
	sc := lineScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '!'); i >= 0 {
			line = line[:i] // comments and OpenMP directives
		}
		if fortranDo().MatchString(line) {
			out = append(out, n)
		}
	}
	return out, sc.Err()
}

func lineScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	return sc
}

// stripC removes comments and string literals from a line of C.
func stripC(line string, inComment bool) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		if inComment {
			if strings.HasPrefix(line[i:], "*/") {
				inComment = false
				i++
			}
			continue
		}
		switch {
		case strings.HasPrefix(line[i:], "//"):
			return b.String(), false
		case strings.HasPrefix(line[i:], "/*"):
			inComment = true
			i++
		case line[i] == '"' || line[i] == '\'':
			q := line[i]
			for i++; i < len(line) && line[i] != q; i++ {
				if line[i] == '\\' {
					i++
				}
			}
			b.WriteString(" 0 ")
		default:
			b.WriteByte(line[i])
		}
	}
	return b.String(), inComment
}
