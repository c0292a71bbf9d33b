package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"

	"bloop/atomicfile"
	"bloop/diff"
	"bloop/structure"
	"bloop/view"
)

// diffNotes follow the usage line in -h: which files diff reads, and how
// its report writes scope paths (built in diff/scopes.go).
const diffNotes = `
A and B are hpcstruct XML or bloop JSON (struct --format json), told apart by
content; the two forms of one structure compare equal. Exit 0 equal,
1 different, 2 error (a malformed file: one line FILE:LINE: what is wrong).

A and B may instead both be directories: the structure files under each
(recognised by content, whatever their names; other files are ignored and
counted) are paired by relative path and each pair is diffed as two files
are. The report has one line per pair that differs, with its counts, one per
file only in a or only in b, then a totals line; --json writes one document
with every pair's report. A file that does not parse is one error line and
exit 2, the other pairs are still diffed.

Report paths name a scope inside the procedure of their section, outermost
first, joined by "/" (B's scopes for additions, A's otherwise; files are
basenames; line 0 or file <unknown>: not known):
  L(file:line)                  loop and its header line
  A(file:line:)/A(file:line:f)  inlined call of f: the call site (third
                                field empty), then f's file and first line
  S(file:line)                  that line's statements directly in the
                                scope (--addresses)
  file:line                     a line moving into or out of loops
  (procedure)                   the procedure itself (--addresses)
Guard aliens (n="<inline>") are not shown; siblings with the same path are
not numbered but paired in address order. Example, in procedure inline_poly:
  loop removed  L(inline.c:53)/A(inline.c:54:)/A(inline_helpers.h:12:poly_eval)/L(inline_helpers.h:12)
A's loop at inline_helpers.h:12, in poly_eval inlined at inline.c:54 inside
the loop at inline.c:53, is not in B.

--html FILE also writes the diff as one self-contained HTML page (the report
still goes to stdout): the procedures that differ, both trees side by side
with the changes coloured, and the sources (found as bloop report --html
finds them: -I, -R) with both sides' loops and the changes on their lines.
A page of more than 600,000 scopes is refused: --proc REGEXP keeps the
procedures whose name matches.
`

// runDiff compares two structure files; exit 0 equal, 1 different, 2 error, like diff(1).
func runDiff(args []string) int {
	fs := newFlagSet("diff", "usage: bloop diff [flags] A B\n       bloop diff [flags] DIR_A DIR_B\n"+diffNotes)
	addrs := fs.Bool("addresses", false, "also compare address ranges")
	asJSON := fs.Bool("json", false, "write the report as JSON")
	jobs := fs.Int("j", 0, "directories: pairs diffed at once (default: all cores)")
	fs.alias("j", "jobs")
	htmlOut := fs.String("html", "", "also write the diff as one self-contained HTML page (both trees side by side, the sources) to `file`")
	proc := fs.String("proc", "", "--html: only the procedures whose name matches the regular expression `re`")
	sources := pageSourceFlags(fs)
	noDebuginfod := fs.Bool("no-debuginfod", false, "--html: do not fetch the sources not found here from the debuginfod servers of $DEBUGINFOD_URLS")
	operands, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(operands) != 2 {
		fs.Usage()
		return 2
	}
	page, err := diffPageOptions(*htmlOut, *proc, sources)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop diff: %v\n", err)
		return 2
	}
	if page != nil {
		_, _, page.o.Sources.Fetcher = fetchers(debuginfodClient(*noDebuginfod))
	}
	opts := diff.DiffOptions{Addresses: *addrs, Detail: page != nil}
	dirs, err := diff.BothDirs(operands[0], operands[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop diff: %v (see bloop diff -h)\n", err)
		return 2
	}
	if dirs {
		if *jobs <= 0 {
			*jobs = runtime.GOMAXPROCS(0)
		}
		return diffDirs(operands[0], operands[1], opts, *jobs, *asJSON, page)
	}
	// The two files are read side by side: reading is most of a diff's
	// time.
	var docs [2]*structure.Doc
	var errs [2]error
	var wg sync.WaitGroup
	for i := range docs {
		wg.Go(func() { docs[i], errs[i] = structure.ParseFile(operands[i]) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			fmt.Fprintf(os.Stderr, "bloop diff: %v\n", err)
			return 2
		}
	}
	r := diff.Diff(docs[0], docs[1], opts)
	if *asJSON {
		err = r.WriteJSON(os.Stdout)
	} else {
		err = r.WriteText(os.Stdout)
	}
	if err == nil && page != nil {
		if page.o.Sources.Fetcher != nil {
			page.o.Sources.BuildIDs = moduleBuildIDs(docs[:])
		}
		err = page.write(func() (*view.DiffData, error) { return view.DiffPage(r, page.o) })
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop diff: %v\n", err)
		return 2
	}
	if r.Equal() {
		return 0
	}
	return 1
}

// diffDirs compares the structure files of two directories: each error on
// stderr in one line, the report on stdout; exit 2 after any error, else
// 1 when the trees differ, else 0.
func diffDirs(a, b string, opts diff.DiffOptions, jobs int, asJSON bool, page *diffPage) int {
	r, err := diff.DiffDirs(a, b, opts, jobs)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop diff: %v\n", err)
		return 2
	}
	for _, e := range r.Errors {
		fmt.Fprintf(os.Stderr, "bloop diff: %s\n", e.Message)
	}
	if asJSON {
		err = r.WriteJSON(os.Stdout)
	} else {
		err = r.WriteText(os.Stdout)
	}
	if err == nil && page != nil {
		if page.o.Sources.Fetcher != nil {
			page.o.Sources.BuildIDs = pairBuildIDs(a, b, r)
		}
		err = page.write(func() (*view.DiffData, error) { return view.DirDiffPage(r, page.o) })
	}
	switch {
	case err != nil:
		fmt.Fprintf(os.Stderr, "bloop diff: %v\n", err)
		return 2
	case len(r.Errors) > 0:
		return 2
	case !r.Equal():
		return 1
	}
	return 0
}

// moduleBuildIDs are the build-ids of the modules the structure files
// describe, of those whose file is here: what the page's sources are
// fetched by.
func moduleBuildIDs(docs []*structure.Doc) [][]byte {
	var s buildIDSet
	for _, d := range docs {
		s.add(d)
	}
	return s.ids
}

// pairBuildIDs are moduleBuildIDs of the pairs of a directory diff that
// differ (the page shows only those), each pair's files read again one
// at a time: the diff keeps canonical trees, without the modules' paths.
func pairBuildIDs(a, b string, r *diff.DirReport) [][]byte {
	var s buildIDSet
	for _, p := range r.Pairs {
		if p.Equal {
			continue
		}
		for _, dir := range []string{a, b} {
			if d, err := structure.ParseFile(filepath.Join(dir, filepath.FromSlash(p.Path))); err == nil {
				s.add(d)
			}
		}
	}
	return s.ids
}

// buildIDSet gathers the build-ids of the modules structure files
// describe, each once, in the order met.
type buildIDSet struct {
	ids  [][]byte
	seen map[string]bool
}

func (s *buildIDSet) add(d *structure.Doc) {
	for _, m := range d.Modules() {
		id := view.BuildIDOf(m.Path)
		if id == nil || s.seen[string(id)] {
			continue
		}
		if s.seen == nil {
			s.seen = map[string]bool{}
		}
		s.seen[string(id)] = true
		s.ids = append(s.ids, id)
	}
}

// diffPage is what --html asks for: the page's file and options.
type diffPage struct {
	out string
	o   view.DiffOptions
}

// diffPageOptions reads the flags of --html; nil without it. --proc
// alone is an error (it chooses what the page shows); -I and -R alone
// are ignored, as bloop report ignores them without --html.
func diffPageOptions(out, proc string, sources func() (view.Options, error)) (*diffPage, error) {
	if out == "" {
		if proc != "" {
			return nil, fmt.Errorf("--proc chooses the procedures of the HTML page: use it with --html")
		}
		return nil, nil
	}
	p := &diffPage{out: out}
	var err error
	if p.o.Sources, err = sources(); err != nil {
		return nil, err
	}
	if proc != "" {
		re, err := regexp.Compile(proc)
		if err != nil {
			return nil, fmt.Errorf("--proc: %w", err)
		}
		p.o.Proc = re
	}
	p.o.MaxScopes = pageMaxScopes
	return p, nil
}

// pageSourceFlags declares -I and -R, where an HTML page (bloop report
// --html, bloop diff --html) looks for the sources it embeds, and returns
// what reads them once fs is parsed.
func pageSourceFlags(fs *flagSet) func() (view.Options, error) {
	var dirs, repl multiFlag
	fs.Var(&dirs, "I", "--html: also look for sources in `dir`; dir/* searches its tree by base name (repeatable)")
	fs.alias("I", "include")
	fs.alias("I", "source-dir")
	fs.Var(&repl, "R", "--html: look for sources whose path starts with `old=new`'s old under new instead (repeatable; \\= is a literal =)")
	fs.alias("R", "replace-path")
	return func() (view.Options, error) {
		rs, err := parseReplacements(repl)
		if err != nil {
			return view.Options{}, fmt.Errorf("-R: %w", err)
		}
		return view.Options{SourceDirs: dirs, Replace: rs}, nil
	}
}

// pageMaxScopes bounds the pages bloop writes (0: view's default); tests
// lower it.
var pageMaxScopes = 0

// write makes the page's data and writes it atomically: a page refused
// as too large leaves no file.
func (p *diffPage) write(data func() (*view.DiffData, error)) error {
	d, err := data()
	if err != nil {
		return err
	}
	return atomicfile.Write(p.out, func(w io.Writer) error {
		if err := view.WriteDiff(w, d); err != nil {
			return fmt.Errorf("writing %s: %w", p.out, err)
		}
		return nil
	})
}
