package main

import (
	"fmt"
	"os"
	"runtime"

	"bloop/golden"
)

// diffNotes follow the usage line in -h: which files diff reads, and how
// its report writes scope paths (built in golden/scopes.go).
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
`

// runDiff compares two structure files; exit 0 equal, 1 different, 2 error, like diff(1).
func runDiff(args []string) int {
	fs := newFlagSet("diff", "usage: bloop diff [flags] A B\n       bloop diff [flags] DIR_A DIR_B\n"+diffNotes)
	addrs := fs.Bool("addresses", false, "also compare address ranges")
	asJSON := fs.Bool("json", false, "write the report as JSON")
	jobs := fs.Int("j", 0, "directories: pairs diffed at once (default: all cores)")
	fs.alias("j", "jobs")
	operands, code, ok := fs.parse(args)
	if !ok {
		return code
	}
	if len(operands) != 2 {
		fs.Usage()
		return 2
	}
	dirs, err := golden.BothDirs(operands[0], operands[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "bloop diff: %v (see bloop diff -h)\n", err)
		return 2
	}
	if dirs {
		if *jobs <= 0 {
			*jobs = runtime.GOMAXPROCS(0)
		}
		return diffDirs(operands[0], operands[1], golden.DiffOptions{Addresses: *addrs}, *jobs, *asJSON)
	}
	var docs [2]*golden.Doc
	for i := range docs {
		d, err := golden.ParseFile(operands[i])
		if err != nil {
			fmt.Fprintf(os.Stderr, "bloop diff: %v\n", err)
			return 2
		}
		docs[i] = d
	}
	r := golden.Diff(docs[0], docs[1], golden.DiffOptions{Addresses: *addrs})
	if *asJSON {
		err = r.WriteJSON(os.Stdout)
	} else {
		err = r.WriteText(os.Stdout)
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
func diffDirs(a, b string, opts golden.DiffOptions, jobs int, asJSON bool) int {
	r, err := golden.DiffDirs(a, b, opts, jobs)
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
